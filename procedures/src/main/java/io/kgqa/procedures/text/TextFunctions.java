package io.kgqa.procedures.text;

import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.UserFunction;

/**
 * The {@code kgqa.text.*} namespace: text embeddings computed inside the database, so that a
 * Cypher-only user can embed a question the same way the loader embedded entity names.
 */
public class TextFunctions {

    @Context
    public Transaction tx;

    @UserFunction(name = "kgqa.text.embed")
    @Description("kgqa.text.embed(text :: STRING, config = {} :: MAP) :: LIST<FLOAT> - the sentence embedding"
            + " of text (384 floats, L2-normalised), computed in the database. By default all-MiniLM-L6-v2 with"
            + " ONNX Runtime: BERT uncased WordPiece tokenisation (at most 256 tokens), the exported transformer,"
            + " mean pooling, L2 normalisation; matches sentence-transformers (cosine >= 0.999). config.kg: the"
            + " encoder that KG's vectors come from (its embedding_model, e.g. all-MiniLM-L6-v2-static, the fast"
            + " static model: token rows averaged, no transformer), so the result compares with its stored"
            + " embeddings; config.encoder: an encoder by name. Reads encoder/<name>/ under the models directory"
            + " (JVM property kgqa.models.dir); `python -m kgqa.models.encoder [--static]` builds it (kgqa server"
            + " start and kgqa load --embeddings fast do). null in, null out.")
    public List<Double> embed(@Name("text") String text,
                              @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        TextLimits.length(text, "text"); // a long word costs the tokeniser nothing: it becomes [UNK]
        Options options = new Options(config, "config", List.of("kg", "encoder"));
        if (options.has("kg") && options.has("encoder")) {
            throw new BadArgumentException("config: give kg or encoder, not both");
        }
        String encoder = options.has("encoder") ? options.string("encoder", TextEncoder.DEFAULT_NAME)
                : options.has("kg")
                ? KnowledgeGraphs.embeddingModel(tx, KnowledgeGraphs.require(tx, options.string("kg", null),
                        options.where("kg")), TextEncoder.DEFAULT_NAME)
                : TextEncoder.DEFAULT_NAME;
        if (text == null) {
            return null;
        }
        if (!options.has("encoder")) {
            return toList(embedText(text, encoder));
        }
        try {
            return toList(embedText(text, encoder));
        } catch (IllegalArgumentException unknown) {  // a name the user gave: say which argument it was
            String where = options.where("encoder");
            String message = unknown instanceof BadArgumentException bad ? bad.text()
                    : String.valueOf(unknown.getMessage());
            throw message.startsWith(where) ? unknown : new BadArgumentException(where + ": " + message);
        }
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
