package io.kgqa.procedures.text;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.util.Json;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A sentence encoder run inside the database, of one of two kinds, as its {@code encoder.json} says:
 * <ul>
 *   <li>the exported transformer (default all-MiniLM-L6-v2): WordPiece tokenisation
 *       ({@link WordPieceTokenizer}), the transformer through ONNX Runtime, mean pooling over the attention
 *       mask and L2 normalisation, exactly as sentence-transformers does. Files from
 *       {@code python -m kgqa.models.encoder} (run by {@code kgqa server start}):
 *       {@code <models dir>/encoder/<name>/{model.onnx, vocab.txt, encoder.json}};</li>
 *   <li>{@code "kind": "static"} (all-MiniLM-L6-v2-static, the fast path): a table lookup and a mean, no
 *       ONNX ({@link StaticEmbedding}). Files from {@code python -m kgqa.models.encoder --static} (run by
 *       {@code kgqa load --embeddings fast}): {@code model.safetensors, vocab.txt, encoder.json}.</li>
 * </ul>
 * Loaded encoders are kept in a {@link ModelCache} and reloaded when the files change.
 */
public final class TextEncoder implements AutoCloseable {

    public static final String DEFAULT_NAME = "all-MiniLM-L6-v2";
    public static final String STATIC_KIND = "static";

    /** The deliberate process-wide cache of loaded encoders (see {@link ModelCache}). */
    private static final ModelCache<TextEncoder> CACHE = new ModelCache<>();

    private final OrtSession session;
    private final WordPieceTokenizer tokenizer;
    private final int dimension;
    private final String outputName;
    private final Set<String> inputNames;
    private final StaticEmbedding staticEmbedding;

    private TextEncoder(OrtSession session, WordPieceTokenizer tokenizer, int dimension, String outputName) {
        this.session = session;
        this.tokenizer = tokenizer;
        this.dimension = dimension;
        this.outputName = outputName;
        this.inputNames = session.getInputNames();
        this.staticEmbedding = null;
    }

    private TextEncoder(StaticEmbedding staticEmbedding) {
        this.session = null;
        this.tokenizer = null;
        this.dimension = staticEmbedding.dimension();
        this.outputName = null;
        this.inputNames = Set.of();
        this.staticEmbedding = staticEmbedding;
    }

    /**
     * The cached encoder {@code name}; close the lease when done.
     *
     * @throws IllegalArgumentException naming the export command when the files are missing
     */
    public static ModelCache.Lease<TextEncoder> acquire(String name) {
        List<Path> files = requireFiles(name);
        Path directory = files.get(0).getParent();
        return CACHE.acquire("text encoder '" + name + "'", directory, files, TextEncoder::load);
    }

    /**
     * The files of encoder {@code name} (encoder.json first, then model.onnx or model.safetensors, and
     * vocab.txt), without loading them: lets a caller that can do without the encoder find out cheaply
     * whether it is there.
     *
     * @throws IllegalArgumentException naming the export command when a file is missing
     */
    public static List<Path> requireFiles(String name) {
        Path directory = ModelsDir.modelDir("encoder", name, "encoder");
        Path meta = directory.resolve("encoder.json");
        boolean isStatic = STATIC_KIND.equals(kindOf(meta));
        List<Path> files = List.of(meta, directory.resolve(isStatic ? "model.safetensors" : "model.onnx"),
                directory.resolve("vocab.txt"));
        for (Path file : files) {
            if (!Files.isRegularFile(file)) {
                String build = isStatic || name.endsWith("-static")
                        ? "`python -m kgqa.models.encoder --static --home <KGQA_HOME>` (kgqa load --embeddings fast does)"
                        : "`python -m kgqa.models.encoder --home <KGQA_HOME>` (kgqa server start does)";
                throw new IllegalArgumentException("no text encoder '" + name + "' in " + directory.getParent()
                        + " (missing " + file.getFileName() + "); build it with " + build
                        + " and make sure the server's " + ModelsDir.PROPERTY + " points at that models directory");
            }
        }
        return files;
    }

    private static String kindOf(Path meta) {
        if (!Files.isRegularFile(meta)) {
            return null;
        }
        try {
            return Json.readObject(meta).get("kind") instanceof String s ? s : null;
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    static TextEncoder load(Path directory) throws Exception {
        Map<String, Object> meta = Json.readObject(directory.resolve("encoder.json"));
        if (STATIC_KIND.equals(meta.get("kind"))) {
            return new TextEncoder(StaticEmbedding.load(directory, meta));
        }
        int maxLength = intOf(meta, "max_seq_length", 256);
        int dimension = intOf(meta, "dimension", 384);
        boolean lowercase = boolOf(meta, "do_lower_case", true);
        boolean stripAccents = boolOf(meta, "strip_accents", lowercase);
        String output = meta.get("output") instanceof String s ? s : "last_hidden_state";
        WordPieceTokenizer tokenizer = WordPieceTokenizer.fromVocabFile(
                directory.resolve("vocab.txt"), maxLength, lowercase, stripAccents);
        OrtSession session = Onnx.openSession(directory.resolve("model.onnx"));
        if (!session.getOutputNames().contains(output)) {
            session.close();
            throw new IllegalArgumentException("encoder model in " + directory + " has no output '" + output + "'");
        }
        return new TextEncoder(session, tokenizer, dimension, output);
    }

    /** The transformer's tokenizer; null for a static encoder (see {@link #staticEmbedding()}). */
    public WordPieceTokenizer tokenizer() {
        return tokenizer;
    }

    /** The static table, or null for a transformer. */
    public StaticEmbedding staticEmbedding() {
        return staticEmbedding;
    }

    public int dimension() {
        return dimension;
    }

    /** The L2-normalised sentence embedding of {@code text}. */
    public float[] embed(String text) {
        if (staticEmbedding != null) {
            return staticEmbedding.embed(text);
        }
        try {
            return run(text);
        } catch (OrtException e) {
            throw new IllegalStateException("text encoder failed on ONNX Runtime: " + e.getMessage(), e);
        }
    }

    private float[] run(String text) throws OrtException {
        long[] ids = tokenizer.encode(text);
        int length = ids.length;
        long[] shape = {1, length};
        long[] mask = new long[length];
        java.util.Arrays.fill(mask, 1L);
        long[] types = new long[length];
        OrtEnvironment env = Onnx.environment();
        Map<String, OnnxTensor> inputs = new HashMap<>();
        try {
            inputs.put("input_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(ids), shape));
            if (inputNames.contains("attention_mask")) {
                inputs.put("attention_mask", OnnxTensor.createTensor(env, LongBuffer.wrap(mask), shape));
            }
            if (inputNames.contains("token_type_ids")) {
                inputs.put("token_type_ids", OnnxTensor.createTensor(env, LongBuffer.wrap(types), shape));
            }
            try (OrtSession.Result result = session.run(inputs, Set.of(outputName))) {
                OnnxTensor hidden = (OnnxTensor) result.get(0);
                long[] hiddenShape = hidden.getInfo().getShape();
                if (hiddenShape.length != 3 || hiddenShape[2] != dimension) {
                    throw new IllegalStateException("encoder output has shape " + java.util.Arrays.toString(hiddenShape)
                            + ", expected [1, " + length + ", " + dimension + "]");
                }
                java.nio.FloatBuffer values = hidden.getFloatBuffer();
                return meanPoolNormalize(values, length, dimension);
            }
        } finally {
            for (OnnxTensor tensor : inputs.values()) {
                tensor.close();
            }
        }
    }

    /** Mean over the (all-attended) tokens, then L2 normalisation, accumulated in double. */
    static float[] meanPoolNormalize(java.nio.FloatBuffer hidden, int tokens, int dimension) {
        double[] sum = new double[dimension];
        for (int t = 0; t < tokens; t++) {
            int base = t * dimension;
            for (int d = 0; d < dimension; d++) {
                sum[d] += hidden.get(base + d);
            }
        }
        double norm = 0;
        for (int d = 0; d < dimension; d++) {
            sum[d] /= tokens;
            norm += sum[d] * sum[d];
        }
        norm = Math.max(Math.sqrt(norm), 1e-12);
        float[] out = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            out[d] = (float) (sum[d] / norm);
        }
        return out;
    }

    @Override
    public void close() throws OrtException {
        if (session != null) {
            session.close();
        }
    }

    private static int intOf(Map<String, Object> meta, String key, int fallback) {
        Object value = meta.get(key);
        return value instanceof Number n ? n.intValue() : fallback;
    }

    private static boolean boolOf(Map<String, Object> meta, String key, boolean fallback) {
        Object value = meta.get(key);
        return value instanceof Boolean b ? b : fallback;
    }
}
