package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.TextEncoder;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Vectors;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * The last resort when no name matches: content spans embedded in the database and looked up in the
 * {@code entity_embedding} vector index; only near-identical names count.
 *
 * @param log where the one-time warnings go; may be null
 */
record VectorFallback(Transaction tx, String kg, Log log) {

    static final int VECTOR_K = 25;
    /** Below this a vector neighbour is a guess, not a link. */
    static final double VECTOR_MIN_COSINE = 0.9;
    /** Longest run of content words embedded as one span: names the user may mean, not whole clauses. */
    private static final int MAX_SPAN_WORDS = 4;
    private static final String VECTOR_QUERY = "CALL db.index.vector.queryNodes('entity_embedding', $k, $vector)"
            + " YIELD node, score RETURN node, score";
    private static final String VECTOR_INDEX = "entity_embedding";

    /**
     * Why the vector fallback was skipped, per models directory and reason: the deliberate thread-safe memory
     * that makes the warning appear once per server rather than once per question.
     */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    /** Entities whose embedded name is all but identical to a content span's embedding, best first. */
    List<Candidate> candidates(List<Token> tokens, boolean[] content) {
        // Maximal runs of content words and their sub-spans up to 4 words: the names the user may mean.
        Map<String, int[]> spans = new LinkedHashMap<>();
        int i = 0;
        while (i < tokens.size()) {
            if (!content[i]) {
                i++;
                continue;
            }
            int j = i;
            while (j < tokens.size() && content[j]) {
                j++;
            }
            for (int a = i; a < j; a++) {
                for (int b = a + 1; b <= Math.min(j, a + MAX_SPAN_WORDS); b++) {
                    spans.putIfAbsent(LinkText.stripPunct(LinkText.join(tokens, a, b)), new int[] {a, b});
                }
            }
            i = j;
        }
        spans.remove("");
        if (spans.isEmpty() || !available()) {
            return List.of();
        }
        record Neighbour(int[] span, Node node, double score) {
        }
        List<Neighbour> neighbours = new ArrayList<>();
        try (ModelCache.Lease<TextEncoder> encoder = TextEncoder.acquire(encoderName())) {
            for (Map.Entry<String, int[]> span : spans.entrySet()) {
                float[] embedded = encoder.get().embed(span.getKey());
                if (Vectors.isZero(embedded)) {
                    continue; // the static encoder knows none of the span's tokens: nothing to search with
                }
                List<Double> vector = new ArrayList<>();
                for (float x : embedded) {
                    vector.add((double) x);
                }
                try (Result result = tx.execute(VECTOR_QUERY, Map.of("k", (long) VECTOR_K, "vector", vector))) {
                    while (result.hasNext()) {
                        Map<String, Object> row = result.next();
                        Node node = (Node) row.get("node");
                        if (kg.equals(node.getProperty("kg", null))) {
                            neighbours.add(new Neighbour(span.getValue(), node, ((Number) row.get("score")).doubleValue()));
                        }
                    }
                }
            }
        }
        // best first over all spans; a stable sort keeps span order in ties
        neighbours.sort((x, y) -> Double.compare(y.score(), x.score()));
        List<Candidate> out = new ArrayList<>();
        for (Neighbour n : neighbours) {
            double similarity = 2 * n.score() - 1; // the index reports (1 + cos) / 2
            if (similarity < VECTOR_MIN_COSINE) {
                continue;
            }
            // no degree, no relationship types: no relation cue lifts a vector link, and a name found by its
            // letters wins a tie
            out.add(new Candidate(n.node(), IndexCandidates.idOf(n.node()), IndexCandidates.nameOf(n.node()),
                    n.span()[0], n.span()[1], "vector", LinkScoring.VECTOR_MATCH * similarity, 0, List.of()));
        }
        return out;
    }

    /** The encoder the KG's entity names were embedded with: the span must be embedded the same way. */
    private String encoderName() {
        return KnowledgeGraphs.embeddingModel(tx, kg, TextEncoder.DEFAULT_NAME);
    }

    /**
     * Whether the fallback can run: a server without the exported encoder, ONNX Runtime or the vector index
     * still links by name, with a warning (once) instead of an error.
     */
    private boolean available() {
        String problem = null;
        try {
            Onnx.requireRuntime();
            TextEncoder.requireFiles(encoderName());
        } catch (IllegalArgumentException | IllegalStateException e) {
            problem = e.getMessage();
        }
        if (problem == null) {
            boolean indexed = false;
            for (var index : tx.schema().getIndexes(IndexCandidates.ENTITY)) {
                indexed |= VECTOR_INDEX.equals(index.getName());
            }
            if (!indexed) {
                problem = "there is no vector index '" + VECTOR_INDEX + "' (run `kgqa load` with embeddings)";
            }
        }
        if (problem == null) {
            return true;
        }
        if (log != null && WARNED.add(ModelsDir.root() + "|" + problem)) {
            log.warn("kgqa entity linking: no vector fallback for names that neither match exactly nor"
                    + " fuzzily: " + problem);
        }
        return false;
    }
}
