package io.kgqa.procedures.util;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;

/**
 * Entity embeddings kept in memory between procedure calls, per KG.
 *
 * <p>Why: a 384-float property spans a dozen dynamic-array records, and reading it costs about 20 µs even
 * from the page cache. A 3-hop MetaQA question scores triples over some 10,000 entities, so reading their
 * embeddings took longer than everything else SubgraphRAG and its cosine baseline do in the database.
 *
 * <p>Correctness: the cache of a KG belongs to one generation of that KG, identified by its {@code (:KG)}
 * node's status, fingerprint, embedding model and load time. A load changes them, so the next call starts
 * a new generation; while a KG is not {@code complete} (being loaded) nothing is cached and every read goes
 * to the store. Embeddings edited by hand without a load are not noticed until the next load or restart.
 *
 * <p>Memory: at most {@code kgqa.embeddingCache.mb} megabytes of vectors (system property, default 256; 0
 * turns the cache off). When the budget is spent, further vectors are read from the store and not kept.
 */
public final class EmbeddingCache {

    public static final String BUDGET_PROPERTY = "kgqa.embeddingCache.mb";
    private static final long DEFAULT_BUDGET_MB = 256;
    private static final Label KG = Label.label("KG");
    private static final float[] NONE = new float[0];
    private static final EmbeddingCache SHARED = new EmbeddingCache(Long.getLong(BUDGET_PROPERTY, DEFAULT_BUDGET_MB)
            * 1024 * 1024 / Float.BYTES);

    private final long budgetFloats;
    private final AtomicLong usedFloats = new AtomicLong();
    private final AtomicLong hits = new AtomicLong();
    private final ConcurrentHashMap<String, Generation> byKg = new ConcurrentHashMap<>();

    private record Generation(String stamp, ConcurrentHashMap<Long, float[]> vectors) {
    }

    EmbeddingCache(long budgetFloats) {
        this.budgetFloats = Math.max(0, budgetFloats);
    }

    public static EmbeddingCache shared() {
        return SHARED;
    }

    /** Vectors served from memory so far (for tests and diagnostics). */
    public long hits() {
        return hits.get();
    }

    /** A reader that always goes to the store (a baseline, or a caller that wants fresh reads). */
    public Reader uncached() {
        return new Reader(null);
    }

    /** A reader of KG {@code kg}'s entity embeddings for one procedure call. */
    public Reader reader(Transaction tx, String kg) {
        String stamp = budgetFloats == 0 ? null : stamp(tx, kg);
        if (stamp == null) {
            Generation dropped = byKg.remove(kg); // a dropped or reloading KG frees its memory
            if (dropped != null) {
                usedFloats.addAndGet(-size(dropped));
            }
            return new Reader(null);
        }
        Generation current = byKg.compute(kg, (name, generation) -> {
            if (generation != null && generation.stamp.equals(stamp)) {
                return generation;
            }
            if (generation != null) {
                usedFloats.addAndGet(-size(generation));
            }
            return new Generation(stamp, new ConcurrentHashMap<>());
        });
        return new Reader(current);
    }

    /** The KG's generation, or null when it is missing or not complete (a load in progress). */
    private static String stamp(Transaction tx, String kg) {
        try (ResourceIterator<Node> found = tx.findNodes(KG, "name", kg)) {
            if (!found.hasNext()) {
                return null;
            }
            Node node = found.next();
            if (!"complete".equals(node.getProperty("status", null))) {
                return null;
            }
            return node.getProperty("fingerprint", "") + "|" + node.getProperty("embedding_model", "") + "|"
                    + node.getProperty("loaded_at", "");
        }
    }

    private static long size(Generation generation) {
        long floats = 0;
        for (float[] vector : generation.vectors.values()) {
            floats += vector.length;
        }
        return floats;
    }

    /** Reads through the cache of one generation (or straight from the store when there is none). */
    public final class Reader {
        private final Generation generation;

        private Reader(Generation generation) {
            this.generation = generation;
        }

        /** The node's {@code embedding} property as float[], or null when it has none. */
        @SuppressWarnings({"deprecation", "removal"}) // getId(): stable within a generation (no deletes without a load)
        public float[] vector(Node node) {
            if (generation == null) {
                return Vectors.toFloats(node.getProperty("embedding", null));
            }
            float[] cached = generation.vectors.get(node.getId());
            if (cached != null) {
                hits.incrementAndGet();
                return cached == NONE ? null : cached;
            }
            float[] vector = Vectors.toFloats(node.getProperty("embedding", null));
            float[] kept = vector == null ? NONE : vector;
            if (usedFloats.addAndGet(kept.length) <= budgetFloats) {
                generation.vectors.put(node.getId(), kept);
            } else {
                usedFloats.addAndGet(-kept.length);
            }
            return vector;
        }
    }
}
