package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Transaction;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EmbeddingCacheTest {

    private static final Label ENTITY = Label.label("Entity");
    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().build();
    }

    @AfterAll
    void stop() {
        if (neo4j != null) {
            neo4j.close();
        }
    }

    @BeforeEach
    void graph() {
        neo4j.database().executeTransactionally("MATCH (n) DETACH DELETE n");
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'k', status: 'complete', fingerprint: 'f1', loaded_at: 1})
                CREATE (:Entity {kg: 'k', id: 'a', embedding: [1.0, 2.0]})
                CREATE (:Entity {kg: 'k', id: 'none'})
                """);
    }

    private <T> T read(Function<Transaction, T> work) {
        try (Transaction tx = neo4j.database().beginTx()) {
            return work.apply(tx);
        }
    }

    private float[] vector(EmbeddingCache cache, String id) {
        return read(tx -> cache.reader(tx, "k").vector(tx.findNode(ENTITY, "id", id)));
    }

    @Test
    void aCompleteKgIsServedFromMemoryUntilItsNextLoad() {
        EmbeddingCache cache = new EmbeddingCache(1000);
        assertArrayEquals(new float[] {1, 2}, vector(cache, "a"));
        assertArrayEquals(new float[] {1, 2}, vector(cache, "a"));
        assertNull(vector(cache, "none"));
        assertNull(vector(cache, "none"));
        assertEquals(2, cache.hits());
        // Changed in the store without a load: the cache does not see it (documented) ...
        neo4j.database().executeTransactionally("MATCH (e:Entity {id: 'a'}) SET e.embedding = [3.0, 4.0]");
        assertArrayEquals(new float[] {1, 2}, vector(cache, "a"));
        // ... a load (new loaded_at) starts a new generation that does.
        neo4j.database().executeTransactionally("MATCH (k:KG {name: 'k'}) SET k.loaded_at = 2");
        assertArrayEquals(new float[] {3, 4}, vector(cache, "a"));
    }

    @Test
    void aKgBeingLoadedIsAlwaysReadFromTheStore() {
        EmbeddingCache cache = new EmbeddingCache(1000);
        neo4j.database().executeTransactionally("MATCH (k:KG {name: 'k'}) SET k.status = 'loading'");
        vector(cache, "a");
        neo4j.database().executeTransactionally("MATCH (e:Entity {id: 'a'}) SET e.embedding = [5.0, 6.0]");
        assertArrayEquals(new float[] {5, 6}, vector(cache, "a"));
        assertEquals(0, cache.hits());
    }

    @Test
    void theBudgetBoundsWhatIsKept() {
        EmbeddingCache off = new EmbeddingCache(0);
        vector(off, "a");
        assertArrayEquals(new float[] {1, 2}, vector(off, "a"));
        assertEquals(0, off.hits());
        EmbeddingCache small = new EmbeddingCache(1); // room for no 2-float vector
        vector(small, "a");
        vector(small, "a");
        assertEquals(0, small.hits());
    }
}
