package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.text.TextEncoder;
import io.kgqa.procedures.text.TextFunctions;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Vectors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;

/**
 * Candidate KG entities and relations for the texts of a pattern, with their distances: the L2 distance between
 * the text's embedding and the stored one (both unit vectors, so it is sqrt(2 - 2 cos)), as SimGRAG scores them.
 * Entities come from the {@code entity_embedding} vector index plus every entity whose name is exactly the text;
 * relations from the {@code relation_embedding} index. Both indexes serve every loaded KG, so the search asks for
 * more neighbours until it has enough of this KG's.
 */
final class Candidates {

    private static final Label ENTITY = Label.label("Entity");
    private static final Label RELATION = Label.label("Relation");
    private static final String ENTITY_QUERY = "CALL db.index.vector.queryNodes('entity_embedding', $n, $vector) YIELD node, score RETURN node, score";
    private static final String RELATION_QUERY = "CALL db.index.vector.queryNodes('relation_embedding', $n, $vector) YIELD node, score RETURN node, score";
    private static final int MAX_FETCH = 1 << 14;
    /** Entities named exactly as the text are all candidates (Freebase has many namesakes), up to this many. */
    private static final int MAX_NAMESAKES = 256;

    private final Transaction tx;
    private final String kg;
    private final String encoder;
    private final Map<String, float[]> embeddings = new HashMap<>();

    Candidates(Transaction tx, String kg) {
        this.tx = tx;
        this.kg = kg;
        this.encoder = KnowledgeGraphs.embeddingModel(tx, kg, TextEncoder.DEFAULT_NAME);
    }

    /** The text embedded by the encoder the KG's vectors come from (distances are only meaningful then). */
    float[] embed(String text) {
        return embeddings.computeIfAbsent(text, t -> TextFunctions.embedText(t, encoder));
    }

    /** L2 distance of the two unit-length directions: sqrt(2 - 2 cos). */
    static double distance(float[] a, float[] b) {
        return Math.sqrt(Math.max(0, 2 - 2 * Vectors.cosine(a, b)));
    }

    /** The k nearest entities of this KG to {@code text}, and every entity named exactly {@code text}. */
    Map<Node, Double> entities(String text, int k) {
        float[] vector = embed(text);
        Map<Node, Double> out = new LinkedHashMap<>(nearest(ENTITY_QUERY, "entity_embedding", vector, k));
        try (ResourceIterator<Node> namesakes = tx.findNodes(ENTITY, "kg", kg, "name", text)) {
            int taken = 0;
            while (namesakes.hasNext() && taken++ < MAX_NAMESAKES) {
                Node node = namesakes.next();
                out.put(node, distanceTo(node, vector));
            }
        }
        return out;
    }

    /** The distance from {@code text} to one entity (0 when it has no embedding: it was named by the caller). */
    double entityDistance(Node node, String text) {
        return node.hasProperty("embedding") ? distanceTo(node, embed(text)) : 0;
    }

    private static double distanceTo(Node node, float[] vector) {
        float[] stored = Vectors.toFloats(node.getProperty("embedding", null));
        return stored != null && stored.length == vector.length ? distance(vector, stored) : 0;
    }

    /** The k relations of this KG nearest to {@code text}, by relation type name. */
    Map<String, Double> relations(String text, int k) {
        Map<String, Double> out = new LinkedHashMap<>();
        nearest(RELATION_QUERY, "relation_embedding", embed(text), k)
                .forEach((node, d) -> out.put(String.valueOf(node.getProperty("name")), d));
        return out;
    }

    /** Every relation of this KG with its distance to {@code text}. */
    Map<String, Double> allRelations(String text) {
        float[] vector = embed(text);
        Map<String, Double> out = new LinkedHashMap<>();
        try (ResourceIterator<Node> relations = tx.findNodes(RELATION, "kg", kg)) {
            while (relations.hasNext()) {
                Node r = relations.next();
                out.put(String.valueOf(r.getProperty("name")), distanceTo(r, vector));
            }
        }
        return out;
    }

    private Map<Node, Double> nearest(String query, String index, float[] vector, int k) {
        if (Vectors.isZero(vector)) {
            return Map.of(); // a text of unknown tokens only: no neighbour means anything
        }
        List<Double> list = new ArrayList<>(vector.length);
        for (float x : vector) {
            list.add((double) x);
        }
        for (int n = Math.max(k * 4, 32); ; n *= 4) {
            Map<Node, Double> found = new LinkedHashMap<>();
            int seen = 0;
            try (Result rows = tx.execute(query, Map.of("n", (long) n, "vector", list))) {
                while (rows.hasNext()) {
                    Map<String, Object> row = rows.next();
                    seen++;
                    Node node = (Node) row.get("node");
                    if (found.size() < k && kg.equals(node.getProperty("kg", null))) {
                        double score = ((Number) row.get("score")).doubleValue();
                        // Neo4j's cosine score is (1 + cos) / 2
                        found.put(node, 2 * Math.sqrt(Math.max(0, 1 - score)));
                    }
                }
            } catch (RuntimeException e) {
                throw new IllegalStateException("vector index '" + index + "' cannot be searched with a "
                        + vector.length + "-d embedding (" + e.getMessage().lines().findFirst().orElse("") + ");"
                        + " load the KG with embeddings from the same encoder", e);
            }
            if (found.size() >= k || seen < n || n >= MAX_FETCH) {
                return found;
            }
        }
    }
}
