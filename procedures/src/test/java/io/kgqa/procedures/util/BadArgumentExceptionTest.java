package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.neo4j.kernel.api.exceptions.Status;

/** The one exception type of a caller's mistake, and the range messages of {@link Options}. */
class BadArgumentExceptionTest {

    @Test
    void isAClientErrorOfOneLine() {
        BadArgumentException e = new BadArgumentException("pattern edge 1 [a\nb, r]: an edge is\r\n[head, relation, tail]");
        assertEquals("pattern edge 1 [a\\nb, r]: an edge is\\r\\n[head, relation, tail]", e.getMessage());
        assertEquals(Status.Procedure.ProcedureCallFailed, e.status());
        assertEquals(Status.Classification.ClientError, e.status().code().classification());
    }

    @Test
    void optionsSayWhichBoundAnIntegerBreaks() {
        Options options = new Options(Map.of("k", 1_000_000_000_000L, "hops", -1L, "big", 1e300, "n", 0L),
                "config", List.of("k", "hops", "big", "n"));
        assertEquals("config.k must be at most 2147483647, got 1000000000000",
                assertThrows(BadArgumentException.class, () -> options.integer("k", 1, 1, Integer.MAX_VALUE)).getMessage());
        assertEquals("config.big must be at most 2147483647, got 1.0E300",
                assertThrows(BadArgumentException.class, () -> options.integer("big", 1, 1, Integer.MAX_VALUE)).getMessage());
        assertEquals("config.n must be > 0, got 0",
                assertThrows(BadArgumentException.class, () -> options.integer("n", 1, 1, Integer.MAX_VALUE)).getMessage());
        assertEquals("config.hops must be between 1 and 6, got -1",
                assertThrows(BadArgumentException.class, () -> options.integer("hops", 2, 1, 6)).getMessage());
    }
}
