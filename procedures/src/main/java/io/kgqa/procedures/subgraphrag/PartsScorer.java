package io.kgqa.procedures.subgraphrag;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.util.BadArgumentException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A scorer's optional split first layer, {@code parts.onnx} (written by {@code kgqa train subgraphrag}): each
 * entity's {@code [z ‖ code]} row meets the head or tail block of the first layer once, each relation and the
 * question once, and a triple then costs one sum, a ReLU and a dot product instead of a pass through the model.
 * Why: a question's candidates share few entities and relations among many triples.
 */
final class PartsScorer implements AutoCloseable {

    static final String FILE = "parts.onnx";
    /** Entities per parts.onnx call, at most; fewer when entity rows are wide (path codes), so that one
     * input holds at most {@link #BATCH_NUMBERS} numbers (~6 MB). */
    static final int MAX_BATCH_NODES = 4096;
    static final int BATCH_NUMBERS = 4096 * 394;
    private static final List<String> INPUTS = List.of("heads", "tails", "relations", "questions");
    private static final List<String> OUTPUTS = List.of(
            "head_parts", "tail_parts", "relation_parts", "question_parts", "out_weight", "out_bias");

    /** Appends entity {@code index}'s {@code [z ‖ code]} row to {@code out}. */
    @FunctionalInterface
    public interface EntityWriter {
        void write(int index, FloatBuffer out);
    }

    private final String name;
    private final OrtSession session;

    /** @param name the scorer's name, for messages */
    PartsScorer(String name, OrtSession session) {
        this.name = name;
        this.session = session;
    }

    /** Refuses a parts.onnx without the inputs and outputs {@link #score} feeds and reads. */
    void checkSignature(Path directory) throws OrtException {
        if (!session.getInputNames().containsAll(INPUTS) || !session.getOutputNames().containsAll(OUTPUTS)) {
            throw new BadArgumentException("SubgraphRAG model in " + directory + ": " + FILE + " must have"
                    + " inputs " + INPUTS + " and outputs " + OUTPUTS + "; it has inputs "
                    + session.getInputNames() + " and outputs " + session.getOutputNames()
                    + " (rewrite it with `python -m kgqa.training.scorer_onnx " + name + "`)");
        }
    }

    /**
     * The scores of {@code heads.length} triples.
     *
     * @param heads,tails entity indexes of each triple's ends
     * @param relations row of each triple's relation in {@code relationVectors}
     * @param entityRow writes entity v's {@code [z ‖ code]} row of {@code width} numbers
     * @param embeddingDim the length of a relation's and of the question's vector
     */
    float[] score(int entityCount, int[] heads, int[] tails, int[] relations, EntityWriter entityRow, int width,
                  float[][] relationVectors, float[] question, int embeddingDim) throws OrtException {
        int[] headRow = rowsOf(entityCount, heads);
        int[] tailRow = rowsOf(entityCount, tails);
        int[] headEntities = entitiesOf(headRow);
        int[] tailEntities = entitiesOf(tailRow);
        int batchNodes = batchNodes(width);
        int batches = Math.max(1, Math.max(ceilDiv(headEntities.length, batchNodes), ceilDiv(tailEntities.length, batchNodes)));
        float[] headParts = null;
        float[] tailParts = null;
        float[] relationParts = null;
        float[] questionPart = null;
        float[] outWeight = null;
        float outBias = 0;
        int hidden = 0;
        for (int b = 0; b < batches; b++) {
            Map<String, OnnxTensor> inputs = new HashMap<>();
            try {
                int headCount = Math.max(0, Math.min(batchNodes, headEntities.length - b * batchNodes));
                int tailCount = Math.max(0, Math.min(batchNodes, tailEntities.length - b * batchNodes));
                inputs.put("heads", entityTensor(headEntities, b * batchNodes, headCount, width, entityRow));
                inputs.put("tails", entityTensor(tailEntities, b * batchNodes, tailCount, width, entityRow));
                inputs.put("relations", matrixTensor(relationVectors, embeddingDim));
                inputs.put("questions", matrixTensor(new float[][] {question}, embeddingDim));
                try (OrtSession.Result result = session.run(inputs)) {
                    float[] head = floats(result, "head_parts");
                    float[] tail = floats(result, "tail_parts");
                    if (b == 0) {
                        questionPart = floats(result, "question_parts");
                        hidden = questionPart.length;
                        relationParts = floats(result, "relation_parts");
                        outWeight = floats(result, "out_weight");
                        outBias = floats(result, "out_bias")[0];
                        if (outWeight.length != hidden || relationParts.length != relationVectors.length * hidden) {
                            throw new IllegalStateException("SubgraphRAG model '" + name + "': " + FILE
                                    + " outputs disagree on the hidden width " + hidden);
                        }
                        headParts = new float[headEntities.length * hidden];
                        tailParts = new float[tailEntities.length * hidden];
                    }
                    if (headCount > 0) { // a batch past the last head only carries a padding row
                        System.arraycopy(head, 0, headParts, b * batchNodes * hidden, headCount * hidden);
                    }
                    if (tailCount > 0) {
                        System.arraycopy(tail, 0, tailParts, b * batchNodes * hidden, tailCount * hidden);
                    }
                }
            } finally {
                for (OnnxTensor tensor : inputs.values()) {
                    tensor.close();
                }
            }
        }
        float[] scores = new float[heads.length];
        for (int i = 0; i < heads.length; i++) {
            int h = headRow[heads[i]] * hidden;
            int t = tailRow[tails[i]] * hidden;
            int r = relations[i] * hidden;
            float score = outBias;
            for (int j = 0; j < hidden; j++) {
                float pre = questionPart[j] + headParts[h + j] + relationParts[r + j] + tailParts[t + j];
                if (pre > 0) {
                    score += outWeight[j] * pre;
                }
            }
            scores[i] = score;
        }
        return scores;
    }

    /** Entities per parts.onnx call for entity rows of {@code width} numbers. */
    static int batchNodes(int width) {
        return Math.max(64, Math.min(MAX_BATCH_NODES, BATCH_NUMBERS / width));
    }

    /** Per entity, its row among the entities that {@code ends} uses (in first-use order), else -1. */
    private static int[] rowsOf(int entityCount, int[] ends) {
        int[] row = new int[entityCount];
        Arrays.fill(row, -1);
        int next = 0;
        for (int v : ends) {
            if (row[v] < 0) {
                row[v] = next++;
            }
        }
        return row;
    }

    private static int[] entitiesOf(int[] row) {
        int count = 0;
        for (int r : row) {
            count += r >= 0 ? 1 : 0;
        }
        int[] entities = new int[count];
        for (int v = 0; v < row.length; v++) {
            if (row[v] >= 0) {
                entities[row[v]] = v;
            }
        }
        return entities;
    }

    /** Rows {@code from .. from+count} of the entities (one zero row when there are none: ONNX wants a row). */
    private OnnxTensor entityTensor(int[] entities, int from, int count, int width, EntityWriter entityRow)
            throws OrtException {
        int rows = Math.max(count, 1);
        FloatBuffer buffer = ByteBuffer.allocateDirect(rows * width * Float.BYTES).order(ByteOrder.nativeOrder())
                .asFloatBuffer();
        for (int r = 0; r < count; r++) {
            int before = buffer.position();
            entityRow.write(entities[from + r], buffer);
            if (buffer.position() - before != width) {
                throw new IllegalStateException("entity row has " + (buffer.position() - before) + " numbers, model '"
                        + name + "' expects " + width);
            }
        }
        buffer.rewind();
        return OnnxTensor.createTensor(Onnx.environment(), buffer, new long[] {rows, width});
    }

    private static OnnxTensor matrixTensor(float[][] rows, int width) throws OrtException {
        int count = Math.max(rows.length, 1);
        FloatBuffer buffer = ByteBuffer.allocateDirect(count * width * Float.BYTES).order(ByteOrder.nativeOrder())
                .asFloatBuffer();
        for (float[] row : rows) {
            buffer.put(row);
        }
        buffer.rewind();
        return OnnxTensor.createTensor(Onnx.environment(), buffer, new long[] {count, width});
    }

    private static float[] floats(OrtSession.Result result, String output) throws OrtException {
        FloatBuffer buffer = ((OnnxTensor) result.get(output).orElseThrow()).getFloatBuffer();
        float[] out = new float[buffer.remaining()];
        buffer.get(out);
        return out;
    }

    private static int ceilDiv(int a, int b) {
        return (a + b - 1) / b;
    }

    @Override
    public void close() throws OrtException {
        session.close();
    }
}
