package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.util.EmbeddingCache;
import io.kgqa.procedures.util.Vectors;
import java.util.function.Function;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * The stored embeddings of a candidate subgraph's entities and relations, as the scorers read them: a missing one
 * is null (zeros to the scorer), one of the wrong length an error whose wording the caller decides.
 */
final class StoredEmbeddings {

    private static final Label RELATION = Label.label("Relation");

    private final Transaction tx;
    private final Log log;
    private final String kg;
    /**
     * The error for an embedding that is not as long as expected, from the fact ("entity 'x' of KG 'k' has a
     * 384-d embedding"): whatever fixed the length decides whose fault that is.
     */
    private final Function<String, RuntimeException> mismatch;

    /** @param log where the count of entities without an embedding goes; may be null */
    StoredEmbeddings(Transaction tx, Log log, String kg, Function<String, RuntimeException> mismatch) {
        this.tx = tx;
        this.log = log;
        this.kg = kg;
        this.mismatch = mismatch;
    }

    /** The embedding of every node of the subgraph (null when a node has none, which is logged). */
    float[][] entities(CandidateSubgraph subgraph, int dim, boolean cacheEmbeddings) {
        int nodeCount = subgraph.nodes.size();
        float[][] vectors = new float[nodeCount][];
        int missing = 0;
        EmbeddingCache.Reader embeddings = cacheEmbeddings
                ? EmbeddingCache.shared().reader(tx, kg) : EmbeddingCache.shared().uncached();
        for (int v = 0; v < nodeCount; v++) {
            float[] vector = embeddings.vector(subgraph.nodes.get(v));
            if (vector == null) {
                missing++;
            } else if (vector.length != dim) {
                throw mismatch.apply("entity '" + subgraph.nodes.get(v).getProperty("id", "?") + "' of KG '" + kg
                        + "' has a " + vector.length + "-d embedding");
            }
            vectors[v] = vector;
        }
        if (missing > 0 && log != null) {
            log.warn("kgqa.subgraphrag: " + missing + " of " + nodeCount + " candidate entities of KG '" + kg
                    + "' have no embedding; zeros used");
        }
        return vectors;
    }

    /** The embedding of relation {@code type}; null (zeros) when absent. */
    float[] relation(String type, int dim) {
        try (ResourceIterator<Node> it = tx.findNodes(RELATION, "kg", kg, "name", type)) {
            if (!it.hasNext()) {
                return null;
            }
            float[] vector = Vectors.toFloats(it.next().getProperty("embedding", null));
            if (vector != null && vector.length != dim) {
                throw mismatch.apply("relation '" + type + "' of KG '" + kg + "' has a " + vector.length
                        + "-d embedding");
            }
            return vector;
        }
    }
}
