package io.kgqa.procedures.subgraphrag;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.TextEncoder;
import io.kgqa.procedures.util.Json;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A trained SubgraphRAG triple scorer: {@code subgraphrag/<name>/model.onnx} plus {@code meta.json}.
 *
 * <p>The ONNX graph maps input {@code features} (float32 {@code [N, input_dim]}) to output
 * {@code scores} (float32 {@code [N]}, or {@code [N, 1]}). A feature row is
 * {@code [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ dde_head ‖ dde_tail]}, so
 * {@code input_dim = 4 · embedding_dim + 2 · Dde.entityDimension(F, R, include_seed)}; the loader checks
 * that, so a model trained with a different DDE layout fails with a message instead of wrong scores.
 */
public final class ScorerModel implements AutoCloseable {

    public static final String INPUT = "features";
    public static final String OUTPUT = "scores";

    /** The deliberate process-wide cache of loaded scorers (see {@link ModelCache}). */
    private static final ModelCache<ScorerModel> CACHE = new ModelCache<>();

    /** Rows per ONNX Runtime call: bounds the feature buffer (~12 MB at 1,552 columns). */
    static final int BATCH_ROWS = 2048;

    public final String name;
    public final int inputDim;
    public final int embeddingDim;
    public final int forwardRounds;
    public final int reverseRounds;
    public final boolean includeSeed;
    public final String encoder;
    /** Defaults a model may carry for its candidates; null when meta.json does not say. */
    public final Integer hops;
    public final Integer maxCandidates;
    private final OrtSession session;

    private ScorerModel(String name, Map<String, Object> meta, OrtSession session, Path directory) {
        this.name = name;
        this.session = session;
        this.inputDim = requiredInt(meta, "input_dim", directory);
        this.embeddingDim = optionalInt(meta, "embedding_dim", 384);
        this.forwardRounds = optionalInt(meta, "dde_rounds_forward", Dde.DEFAULT_FORWARD_ROUNDS);
        this.reverseRounds = optionalInt(meta, "dde_rounds_reverse", Dde.DEFAULT_REVERSE_ROUNDS);
        Object seed = meta.get("include_seed");
        if (seed instanceof Boolean b) {
            this.includeSeed = b;
        } else {
            // Older meta.json without the flag: infer it from the input width.
            this.includeSeed = inputDim == 4 * embeddingDim + 2 * Dde.entityDimension(forwardRounds, reverseRounds, true);
        }
        this.encoder = meta.get("encoder") instanceof String s ? s : TextEncoder.DEFAULT_NAME;
        this.hops = meta.get("hops") instanceof Number n ? n.intValue() : null;
        this.maxCandidates = meta.get("max_candidates") instanceof Number n ? n.intValue() : null;
    }

    /** Feature width for a DDE layout; must equal {@link #inputDim}. */
    public int featureDim(boolean seed) {
        return 4 * embeddingDim + 2 * Dde.entityDimension(forwardRounds, reverseRounds, seed);
    }

    /**
     * The cached scorer {@code name}; close the lease when done.
     *
     * @throws IllegalArgumentException "no SubgraphRAG model 'x' in <dir>; train one with `kgqa train subgraphrag`"
     */
    public static ModelCache.Lease<ScorerModel> acquire(String name) {
        Path directory = ModelsDir.modelDir("subgraphrag", name, "config.model");
        Path model = directory.resolve("model.onnx");
        Path meta = directory.resolve("meta.json");
        if (!Files.isRegularFile(model) || !Files.isRegularFile(meta)) {
            throw new IllegalArgumentException("no SubgraphRAG model '" + name + "' in " + directory.getParent()
                    + "; train one with `kgqa train subgraphrag`");
        }
        try {
            return CACHE.acquire(directory, List.of(model, meta), dir -> load(name, dir));
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot load SubgraphRAG model '" + name + "' from " + directory + ": " + e, e);
        }
    }

    static ScorerModel load(String name, Path directory) throws Exception {
        Map<String, Object> meta = Json.readObject(directory.resolve("meta.json"));
        OrtSession session = Onnx.openSession(directory.resolve("model.onnx"));
        try {
            ScorerModel model = new ScorerModel(name, meta, session, directory);
            model.checkSignature(directory);
            return model;
        } catch (RuntimeException | OrtException e) {
            session.close();
            throw e;
        }
    }

    private void checkSignature(Path directory) throws OrtException {
        Map<String, NodeInfo> inputs = session.getInputInfo();
        if (!inputs.containsKey(INPUT) || !session.getOutputNames().contains(OUTPUT)) {
            throw new IllegalArgumentException("SubgraphRAG model in " + directory + " must have input '" + INPUT
                    + "' and output '" + OUTPUT + "'; it has inputs " + inputs.keySet()
                    + " and outputs " + session.getOutputNames());
        }
        if (inputs.get(INPUT).getInfo() instanceof TensorInfo info) {
            long[] shape = info.getShape();
            if (shape.length != 2 || (shape[1] > 0 && shape[1] != inputDim)) {
                throw new IllegalArgumentException("SubgraphRAG model in " + directory + ": input '" + INPUT
                        + "' has shape " + java.util.Arrays.toString(shape) + " but meta.json says input_dim "
                        + inputDim);
            }
        }
        if (inputDim != featureDim(includeSeed)) {
            throw new IllegalArgumentException("SubgraphRAG model in " + directory + ": meta.json input_dim "
                    + inputDim + " does not match 4 x embedding_dim " + embeddingDim + " + 2 x DDE("
                    + forwardRounds + " forward, " + reverseRounds + " reverse rounds, include_seed " + includeSeed
                    + ") = " + featureDim(includeSeed));
        }
    }

    /**
     * Scores {@code rows} feature rows, fed by {@code writer} one batch at a time, so only one
     * batch of features is ever in memory.
     */
    public float[] score(int rows, FeatureWriter writer) {
        try {
            return run(rows, writer);
        } catch (OrtException e) {
            throw new IllegalStateException("SubgraphRAG model '" + name + "' failed on ONNX Runtime: " + e.getMessage(), e);
        }
    }

    private float[] run(int rows, FeatureWriter writer) throws OrtException {
        float[] scores = new float[rows];
        int batch = Math.min(BATCH_ROWS, Math.max(rows, 1));
        FloatBuffer buffer = ByteBuffer.allocateDirect(batch * inputDim * Float.BYTES)
                .order(ByteOrder.nativeOrder()).asFloatBuffer();
        for (int start = 0; start < rows; start += batch) {
            int count = Math.min(batch, rows - start);
            buffer.clear();
            for (int r = 0; r < count; r++) {
                int before = buffer.position();
                writer.write(start + r, buffer);
                if (buffer.position() - before != inputDim) {
                    throw new IllegalStateException("feature row " + (start + r) + " has " + (buffer.position() - before)
                            + " numbers, model '" + name + "' expects " + inputDim);
                }
            }
            buffer.flip();
            try (OnnxTensor input = OnnxTensor.createTensor(Onnx.environment(), buffer, new long[] {count, inputDim});
                 OrtSession.Result result = session.run(Map.of(INPUT, input), Set.of(OUTPUT))) {
                FloatBuffer out = ((OnnxTensor) result.get(0)).getFloatBuffer();
                if (out.remaining() != count) {
                    throw new IllegalStateException("SubgraphRAG model '" + name + "' returned " + out.remaining()
                            + " scores for " + count + " rows; output '" + OUTPUT + "' must be [N] or [N, 1]");
                }
                out.get(scores, start, count);
            }
        }
        return scores;
    }

    /** Appends the feature row (exactly input_dim numbers) of candidate {@code index} to {@code out}. */
    @FunctionalInterface
    public interface FeatureWriter {
        void write(int index, FloatBuffer out);
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }

    private static int requiredInt(Map<String, Object> meta, String key, Path directory) {
        if (meta.get(key) instanceof Number n) {
            return n.intValue();
        }
        throw new IllegalArgumentException("SubgraphRAG model in " + directory + ": meta.json has no integer '" + key + "'");
    }

    private static int optionalInt(Map<String, Object> meta, String key, int fallback) {
        return meta.get(key) instanceof Number n ? n.intValue() : fallback;
    }
}
