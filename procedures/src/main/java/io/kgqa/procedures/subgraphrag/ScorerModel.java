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
import io.kgqa.procedures.util.BadArgumentException;
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
 * {@code [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ code_head ‖ code_tail]}, followed by {@code z_q ⊙ z_rel} when
 * meta.json says {@code question_relation}; an entity's code is its DDE, then, when meta.json has
 * {@code path_steps} &gt; 0, its {@link PathCodes} slots. So
 * {@code input_dim = (4 or 5) · embedding_dim + 2 · (Dde.entityDimension(F, R, include_seed) + 2 · path_steps
 * · embedding_dim)}; the loader checks that, so a model trained with a different layout fails with a message
 * instead of wrong scores. With {@code question_relation}, {@code parts.onnx} folds the product into its
 * relation parts.
 */
public final class ScorerModel implements AutoCloseable {

    public static final String INPUT = "features";
    public static final String OUTPUT = "scores";

    /** The deliberate process-wide cache of loaded scorers (see {@link ModelCache}). */
    private static final ModelCache<ScorerModel> CACHE = new ModelCache<>();

    /** Rows per ONNX Runtime call: bounds the feature buffer (~12 MB at 1,552 columns). */
    static final int BATCH_ROWS = 2048;
    /** The optional split first layer (see {@link PartsScorer}), written by {@code kgqa train subgraphrag}. */
    public static final String PARTS_FILE = PartsScorer.FILE;

    public final String name;
    public final int inputDim;
    public final int embeddingDim;
    public final int forwardRounds;
    public final int reverseRounds;
    public final boolean includeSeed;
    /** Steps of the {@link PathCodes} in an entity code; 0 when the model reads DDE only. */
    public final int pathSteps;
    /** Whether a feature row ends with z_q ⊙ z_rel. */
    public final boolean questionRelation;
    public final String encoder;
    /**
     * The word that stands for the topic entity in the text z_q embeds ({@link
     * io.kgqa.procedures.linking.QuestionText#maskTopic}); null for models trained on the question with its
     * brackets removed.
     */
    public final String questionMask;
    /** Defaults a model may carry for its candidates; null when meta.json does not say. */
    public final Integer hops;
    public final Integer maxCandidates;
    private final OrtSession session;
    /** parts.onnx, or null when the model has none (then every triple goes through the whole model). */
    private final PartsScorer parts;

    private ScorerModel(String name, Map<String, Object> meta, OrtSession session, PartsScorer parts, Path directory) {
        this.name = name;
        this.session = session;
        this.parts = parts;
        this.inputDim = requiredInt(meta, "input_dim", directory);
        this.embeddingDim = optionalInt(meta, "embedding_dim", 384);
        this.questionRelation = meta.get("question_relation") instanceof Boolean b && b;
        this.forwardRounds = optionalInt(meta, "dde_rounds_forward", Dde.DEFAULT_FORWARD_ROUNDS);
        this.reverseRounds = optionalInt(meta, "dde_rounds_reverse", Dde.DEFAULT_REVERSE_ROUNDS);
        this.pathSteps = optionalInt(meta, "path_steps", 0);
        Object seed = meta.get("include_seed");
        if (seed instanceof Boolean b) {
            this.includeSeed = b;
        } else {
            // Older meta.json without the flag: infer it from the input width.
            this.includeSeed = inputDim == questionBlocks() * embeddingDim
                    + 2 * (Dde.entityDimension(forwardRounds, reverseRounds, true) + pathDim());
        }
        this.encoder = meta.get("encoder") instanceof String s ? s : TextEncoder.DEFAULT_NAME;
        this.questionMask = meta.get("question_mask") instanceof String s && !s.isEmpty() ? s : null;
        this.hops = meta.get("hops") instanceof Number n ? n.intValue() : null;
        this.maxCandidates = meta.get("max_candidates") instanceof Number n ? n.intValue() : null;
    }

    /** Feature width for a DDE layout; must equal {@link #inputDim}. */
    public int featureDim(boolean seed) {
        return questionBlocks() * embeddingDim + 2 * (Dde.entityDimension(forwardRounds, reverseRounds, seed) + pathDim());
    }

    /** Numbers of an entity's path code as the scorer reads it. */
    public int pathDim() {
        return PathCodes.slots(pathSteps) * embeddingDim;
    }

    /** Embedding-wide blocks of a feature row: question, head, relation, tail, and the product if any. */
    private int questionBlocks() {
        return questionRelation ? 5 : 4;
    }

    /**
     * The cached scorer {@code name}; close the lease when done.
     *
     * @throws IllegalArgumentException "no SubgraphRAG model 'x' in <dir>; train one with `kgqa train subgraphrag`"
     */
    public static ModelCache.Lease<ScorerModel> acquire(ModelsDir.Ref ref) {
        Path directory = ref.directory();
        String name = directory.getFileName().toString();
        Path model = directory.resolve("model.onnx");
        Path meta = directory.resolve("meta.json");
        if (!Files.isRegularFile(model) || !Files.isRegularFile(meta)) {
            throw ref.missing(Files.isRegularFile(model) ? "meta.json" : "model.onnx");
        }
        Path parts = directory.resolve(PARTS_FILE);
        List<Path> files = Files.isRegularFile(parts) ? List.of(model, meta, parts) : List.of(model, meta);
        return CACHE.acquire(ref.label(), directory, files, dir -> load(name, dir));
    }

    static ScorerModel load(String name, Path directory) throws Exception {
        Map<String, Object> meta = Json.readObject(directory.resolve("meta.json"));
        OrtSession session = Onnx.openSession(directory.resolve("model.onnx"));
        PartsScorer parts = null;
        try {
            if (Files.isRegularFile(directory.resolve(PARTS_FILE))) {
                parts = new PartsScorer(name, Onnx.openSession(directory.resolve(PARTS_FILE)));
            }
            ScorerModel model = new ScorerModel(name, meta, session, parts, directory);
            model.checkSignature(directory);
            if (parts != null) {
                parts.checkSignature(directory);
            }
            return model;
        } catch (RuntimeException | OrtException e) {
            session.close();
            if (parts != null) {
                parts.close();
            }
            throw e;
        }
    }

    private void checkSignature(Path directory) throws OrtException {
        Map<String, NodeInfo> inputs = session.getInputInfo();
        if (!inputs.containsKey(INPUT) || !session.getOutputNames().contains(OUTPUT)) {
            throw new BadArgumentException("SubgraphRAG model in " + directory + " must have input '" + INPUT
                    + "' and output '" + OUTPUT + "'; it has inputs " + inputs.keySet()
                    + " and outputs " + session.getOutputNames());
        }
        if (inputs.get(INPUT).getInfo() instanceof TensorInfo info) {
            long[] shape = info.getShape();
            if (shape.length != 2 || (shape[1] > 0 && shape[1] != inputDim)) {
                throw new BadArgumentException("SubgraphRAG model in " + directory + ": input '" + INPUT
                        + "' has shape " + java.util.Arrays.toString(shape) + " but meta.json says input_dim "
                        + inputDim);
            }
        }
        if (inputDim != featureDim(includeSeed)) {
            throw new BadArgumentException("SubgraphRAG model in " + directory + ": meta.json input_dim "
                    + inputDim + " does not match " + questionBlocks() + " x embedding_dim " + embeddingDim + " + 2 x DDE("
                    + forwardRounds + " forward, " + reverseRounds + " reverse rounds, include_seed " + includeSeed
                    + ") = " + featureDim(includeSeed));
        }
    }

    /** Whether the model has the split first layer that {@link #scoreByParts} needs. */
    public boolean hasParts() {
        return parts != null;
    }

    /**
     * The scores of {@code heads.length} triples through the split first layer ({@link PartsScorer}). Equal to
     * {@link #score} up to float rounding.
     *
     * @param heads,tails entity indexes of each triple's ends
     * @param relations row of each triple's relation in {@code relationVectors}
     * @param entityRow writes entity v's {@code [z ‖ dde]} (embedding_dim + DDE numbers)
     */
    public float[] scoreByParts(int entityCount, int[] heads, int[] tails, int[] relations,
                                PartsScorer.EntityWriter entityRow, float[][] relationVectors, float[] question) {
        int width = (inputDim - questionBlocks() * embeddingDim) / 2 + embeddingDim; // z and code of one entity
        try {
            return parts.score(entityCount, heads, tails, relations, entityRow, width, relationVectors, question,
                    embeddingDim);
        } catch (OrtException e) {
            throw new IllegalStateException("SubgraphRAG model '" + name + "' failed on ONNX Runtime (" + PARTS_FILE
                    + "): " + e.getMessage(), e);
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
        if (parts != null) {
            parts.close();
        }
    }

    private static int requiredInt(Map<String, Object> meta, String key, Path directory) {
        if (meta.get(key) instanceof Number n) {
            return n.intValue();
        }
        throw new BadArgumentException("SubgraphRAG model in " + directory + ": meta.json has no integer '" + key + "'");
    }

    private static int optionalInt(Map<String, Object> meta, String key, int fallback) {
        return meta.get(key) instanceof Number n ? n.intValue() : fallback;
    }
}
