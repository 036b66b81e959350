package io.kgqa.procedures.text;

import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.Onnx;
import java.util.ArrayList;
import java.util.List;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.UserFunction;

/**
 * The {@code kgqa.text.*} namespace: text embeddings computed inside the database, so that a
 * Cypher-only user can embed a question the same way the loader embedded entity names.
 */
public class TextFunctions {

    @UserFunction(name = "kgqa.text.embed")
    @Description("kgqa.text.embed(text :: STRING) :: LIST<FLOAT> - the all-MiniLM-L6-v2 sentence embedding"
            + " of text (384 floats, L2-normalised), computed in the database with ONNX Runtime: BERT uncased"
            + " WordPiece tokenisation (at most 256 tokens), the exported transformer, mean pooling, L2"
            + " normalisation; matches sentence-transformers (cosine >= 0.999). Reads the export under the"
            + " models directory (JVM property kgqa.models.dir, encoder/all-MiniLM-L6-v2/); create it with"
            + " `python -m kgqa.models.encoder` (kgqa server start does). null in, null out.")
    public List<Double> embed(@Name("text") String text) {
        if (text == null) {
            return null;
        }
        return toList(embedText(text, TextEncoder.DEFAULT_NAME));
    }

    /** Shared with the SubgraphRAG procedures: one embedding through the cached encoder. */
    public static float[] embedText(String text, String encoderName) {
        Onnx.requireRuntime();
        try (ModelCache.Lease<TextEncoder> encoder = TextEncoder.acquire(encoderName)) {
            return encoder.get().embed(text);
        }
    }

    static List<Double> toList(float[] vector) {
        List<Double> list = new ArrayList<>(vector.length);
        for (float value : vector) {
            list.add((double) value);
        }
        return list;
    }
}
