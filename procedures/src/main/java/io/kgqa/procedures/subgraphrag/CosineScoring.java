package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Vectors;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * The untrained baseline of SubgraphRAG retrieval ({@code kgqa.subgraphrag.cosine}): each candidate triple
 * scored cos(q, head) + cos(q, relation) + cos(q, tail) from the stored embeddings, a missing one adding 0.
 *
 * @param log where truncation and missing embeddings are reported; may be null
 */
record CosineScoring(Transaction tx, Log log) {

    /** The candidates of {@code topics} in {@code kg}, scored against {@code question}; null when there are none. */
    Scored score(String kg, List<Node> topics, float[] question, int k, int hops, int maxCandidates,
                 boolean failOnTruncation, boolean cacheEmbeddings) {
        CandidateSubgraph subgraph = CandidateSubgraph.collect(kg, topics, hops, maxCandidates, failOnTruncation, log);
        if (subgraph.size() == 0) {
            return null;
        }
        int dim = question.length;
        // The caller's vector, not the KG, is what is wrong when their lengths differ.
        StoredEmbeddings stored = new StoredEmbeddings(tx, log, kg, fact -> new BadArgumentException(
                "config.questionEmbedding has " + dim + " numbers, but " + fact));
        // Each entity and relation is compared with the question once, however many triples it is in.
        float[][] vectors = stored.entities(subgraph, dim, cacheEmbeddings);
        double[] nodeSimilarity = new double[vectors.length];
        for (int v = 0; v < vectors.length; v++) {
            nodeSimilarity[v] = Vectors.cosine(question, vectors[v]);
        }
        Map<String, Double> relationSimilarity = new HashMap<>();
        float[] scores = new float[subgraph.size()];
        for (int i = 0; i < scores.length; i++) {
            String type = subgraph.relationships.get(i).getType().name();
            double relation = relationSimilarity.computeIfAbsent(type,
                    t -> Vectors.cosine(question, stored.relation(t, dim)));
            scores[i] = (float) (nodeSimilarity[subgraph.heads[i]] + relation + nodeSimilarity[subgraph.tails[i]]);
        }
        return new Scored(subgraph, scores, k, hops);
    }
}
