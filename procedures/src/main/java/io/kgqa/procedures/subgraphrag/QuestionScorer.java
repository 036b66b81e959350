package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.linking.QuestionText;
import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.TextFunctions;
import io.kgqa.procedures.util.KnowledgeGraphs;
import java.util.List;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * SubgraphRAG retrieval for one question ({@code kgqa.subgraphrag.retrieve} and {@code walks}): the trained
 * scorer, the question's topic entities, its vector (embedded with the topic masked as the model was trained),
 * the candidate triples around the topic entities, and the scorer's score for each.
 *
 * @param log where linking, truncation and missing embeddings are reported; may be null
 */
record QuestionScorer(Transaction tx, Log log) {

    /** The question's candidates and their scores; null when its topic entities have no triple. */
    Scored score(ScoringConfig config) {
        Onnx.requireRuntime();
        try (ModelCache.Lease<ScorerModel> lease = ScorerModel.acquire(config.model())) {
            ScorerModel model = lease.get();
            KnowledgeGraphs.requireSameEncoder(tx, config.kg(), model.encoder, config.model().label(),
                    "`" + config.model().command() + "`");
            ScoringConfig.Settings settings = config.forModel(model);
            TopicEntities.Topics topics = TopicEntities.resolve(tx, config.kg(), log, config.question(),
                    config.topicEntities(), config.topicSpans());
            float[] question = settings.questionEmbedding() != null ? settings.questionEmbedding()
                    : embed(model, config, topics.spans());
            CandidateSubgraph subgraph = CandidateSubgraph.collect(config.kg(), topics.nodes(), settings.hops(),
                    settings.maxCandidates(), settings.failOnTruncation(), log);
            if (subgraph.size() == 0) {
                return null;
            }
            float[] scores = new TripleFeatures(tx, log, config.kg()).score(model, subgraph, question,
                    settings.includeSeed(), settings.cacheEmbeddings());
            return new Scored(subgraph, scores, config.k(), settings.pathHops());
        }
    }

    /** z_q: the question as the model was trained to read it, its topic masked (or, for older models, unbracketed). */
    private static float[] embed(ScorerModel model, ScoringConfig config, List<String> spans) {
        String text = model.questionMask == null ? QuestionText.withoutBrackets(config.question())
                : QuestionText.maskTopic(config.question(), spans, model.questionMask);
        float[] vector = TextFunctions.embedText(text, model.encoder);
        if (vector.length != model.embeddingDim) {
            throw new IllegalStateException("text encoder '" + model.encoder + "' gives " + vector.length
                    + " numbers but " + config.model().label() + " expects embedding_dim " + model.embeddingDim);
        }
        return vector;
    }
}
