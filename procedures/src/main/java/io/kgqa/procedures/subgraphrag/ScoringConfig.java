package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import java.util.List;
import org.neo4j.graphdb.Transaction;

/**
 * The config of {@code kgqa.subgraphrag.retrieve} and {@code walks}, checked in two steps: what needs no model
 * ({@link #of}), then what the model's meta.json gives defaults and bounds for ({@link #forModel}), since a
 * model trained on 3 hops and a 384-d encoder decides what "hops" and "questionEmbedding" may be.
 *
 * @param topicEntities config.topicEntities; null: link the question
 * @param options       the whole config, for {@link #topicSpans} and {@link #forModel}
 */
record ScoringConfig(String question, int k, String kg, ModelsDir.Ref model, List<String> topicEntities,
                     Options options) {

    /** What the model decided: the candidates to collect and the question's vector, if the caller gave one. */
    record Settings(int hops, int maxCandidates, boolean includeSeed, boolean failOnTruncation,
                    boolean cacheEmbeddings, int pathHops, float[] questionEmbedding) {
    }

    /** The question, k, the KG and which model; each error names its argument. */
    static ScoringConfig of(Transaction tx, String question, Options options) {
        int k = options.integer("k", SubgraphRagProcedures.DEFAULT_K, 1, Integer.MAX_VALUE);
        String modelName = options.string("model", null);
        List<String> topicEntities = options.strings("topicEntities");
        if (question == null) {
            throw new BadArgumentException("question must be a string, got null");
        }
        TextLimits.question(question, "question");
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        ModelsDir.Ref ref = ModelsDir.Ref.of("subgraphrag", "SubgraphRAG model", modelName, kg);
        return new ScoringConfig(question, k, kg, ref, topicEntities, options);
    }

    /** config.topicSpans: the words that name the topic entities; null: those the entities were found by. */
    List<String> topicSpans() {
        return options.strings("topicSpans");
    }

    /** The rest of the config, with {@code model}'s defaults and bounds. */
    Settings forModel(ScorerModel model) {
        int hops = options.integer("hops", model.hops != null ? model.hops : SubgraphRagProcedures.DEFAULT_HOPS,
                1, SubgraphRagProcedures.MAX_HOPS);
        int maxCandidates = options.integer("maxCandidates",
                model.maxCandidates != null ? model.maxCandidates : Limits.ROW_CAP, 1,
                SubgraphRagProcedures.LIMIT_MAX_CANDIDATES);
        boolean includeSeed = options.bool("includeSeed", model.includeSeed);
        if (model.featureDim(includeSeed) != model.inputDim) {
            throw new BadArgumentException("config.includeSeed: " + this.model.label() + " was trained with"
                    + " include_seed " + model.includeSeed + " (input_dim " + model.inputDim + "); includeSeed "
                    + includeSeed + " would give " + model.featureDim(includeSeed) + " features");
        }
        boolean failOnTruncation = options.bool("failOnTruncation", false);
        boolean cacheEmbeddings = options.bool("cacheEmbeddings", true);
        int pathHops = options.integer("pathHops", hops, 1, hops);
        float[] questionEmbedding = options.vector("questionEmbedding", model.embeddingDim);
        if (questionEmbedding == null && question.isBlank()) {
            throw new BadArgumentException("question must not be empty (or pass config.questionEmbedding"
                    + " and config.topicEntities)");
        }
        return new Settings(hops, maxCandidates, includeSeed, failOnTruncation, cacheEmbeddings, pathHops,
                questionEmbedding);
    }
}
