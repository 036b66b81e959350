package io.kgqa.procedures.onnx;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.nio.file.Path;

/**
 * ONNX Runtime plumbing shared by the encoder and the scorer.
 *
 * <p>Threads: by default ONNX Runtime sizes its intra-op pool to the machine; with many concurrent
 * queries that oversubscribes the CPU, so an operator can cap it with the JVM system property
 * {@code kgqa.onnx.threads}. Spinning is off (see {@link #openSession}).
 */
public final class Onnx {

    public static final String THREADS_PROPERTY = "kgqa.onnx.threads";

    private Onnx() {
    }

    /**
     * Fails with an actionable message when ONNX Runtime is not on the server's class path (its jar
     * belongs in plugins/ next to the kgqa plugin). Call it before touching any class that uses ONNX
     * Runtime types, which would otherwise fail with a bare NoClassDefFoundError.
     */
    public static void requireRuntime() {
        try {
            Class.forName("ai.onnxruntime.OrtEnvironment", false, Onnx.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalStateException("ONNX Runtime is not installed in this Neo4j server: put"
                    + " com.microsoft.onnxruntime:onnxruntime (onnxruntime-<version>.jar) into its plugins/ directory"
                    + " and restart (`kgqa server start` does this for the managed server); " + e);
        }
    }

    /** The process-wide environment (ONNX Runtime keeps one; this call is cheap after the first). */
    public static OrtEnvironment environment() {
        return OrtEnvironment.getEnvironment();
    }

    public static OrtSession openSession(Path modelFile) throws OrtException {
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        try {
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            int threads = Integer.getInteger(THREADS_PROPERTY, 0);
            if (threads > 0) {
                options.setIntraOpNumThreads(threads);
            }
            // No busy-waiting between operators: inside a database, other queries want the cores more
            // than one small MLP wants a few microseconds of latency.
            options.addConfigEntry("session.intra_op.allow_spinning", "0");
            options.addConfigEntry("session.inter_op.allow_spinning", "0");
            return environment().createSession(modelFile.toString(), options);
        } finally {
            options.close();
        }
    }
}
