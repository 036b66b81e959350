package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void parsesTheShapesOfMetaJson() {
        Object value = Json.parse("{\"input_dim\": 1556, \"include_seed\": true, \"lr\": 1e-3, \"kg\": \"meta\\\"qa\","
                + " \"list\": [1, -2.5, null, \"\\u00e9\"], \"nested\": {}}");
        Map<?, ?> map = (Map<?, ?>) value;
        assertEquals(1556L, map.get("input_dim"));
        assertEquals(Boolean.TRUE, map.get("include_seed"));
        assertEquals(1e-3, map.get("lr"));
        assertEquals("meta\"qa", map.get("kg"));
        assertEquals(List.of(1L, -2.5), ((List<?>) map.get("list")).subList(0, 2));
        assertNull(((List<?>) map.get("list")).get(2));
        assertEquals("é", ((List<?>) map.get("list")).get(3));
        assertEquals(Map.of(), map.get("nested"));
    }

    @Test
    void rejectsMalformedInput() {
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\": 1,}"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\": 1} x"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("[1, 2"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("\"unterminated"));
    }
}
