package io.kgqa.procedures.triplets;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * One knowledge-graph fact as the retrievers hand it to the answerers: {@code [head, relation, tail]}.
 *
 * <p>A record, so equality is exact string equality of all three parts; that is what "duplicate
 * triplet" means for {@code kgqa.triplets.*}.
 */
public record Triplet(String head, String relation, String tail) {

    /** The three keys accepted when a triplet is given as a map instead of a list. */
    private static final List<String> MAP_KEYS = List.of("head", "relation", "tail");

    /** SG-RAG's textual form, one fact per prompt line. */
    public String toLine() {
        return head + "|" + relation + "|" + tail;
    }

    /**
     * Validates and converts a Cypher {@code LIST<LIST<STRING>>} (or a list of
     * {@code {head, relation, tail}} maps) into triplets.
     *
     * <p>Why validate everything up front: a malformed row deep inside a 100k-row list would
     * otherwise surface as a ClassCastException with no hint of which row or argument was wrong.
     *
     * @param value the raw argument as Neo4j passes it (Java lists, maps and strings)
     * @param argumentName named in every error message, e.g. {@code triplets}
     * @throws IllegalArgumentException naming the argument and the 0-based index of the bad entry
     */
    public static List<Triplet> parseAll(List<?> value, String argumentName) {
        if (value == null) {
            throw new BadArgumentException(
                    argumentName + " must be a list of [head, relation, tail] string lists, got null");
        }
        List<Triplet> triplets = new ArrayList<>(value.size());
        int index = 0;
        for (Object entry : value) {
            triplets.add(parseOne(entry, argumentName + "[" + index + "]"));
            index++;
        }
        return Collections.unmodifiableList(triplets);
    }

    private static Triplet parseOne(Object entry, String where) {
        if (entry instanceof List<?> parts) {
            if (parts.size() != 3) {
                throw new BadArgumentException(where
                        + " must have exactly 3 elements [head, relation, tail], got " + parts.size());
            }
            return new Triplet(
                    requireString(parts.get(0), where + "[0] (head)"),
                    requireString(parts.get(1), where + "[1] (relation)"),
                    requireString(parts.get(2), where + "[2] (tail)"));
        }
        if (entry instanceof Map<?, ?> map) {
            for (String key : MAP_KEYS) {
                if (!map.containsKey(key)) {
                    throw new BadArgumentException(where
                            + " must have the keys head, relation and tail; missing '" + key + "'");
                }
            }
            return new Triplet(
                    requireString(map.get("head"), where + ".head"),
                    requireString(map.get("relation"), where + ".relation"),
                    requireString(map.get("tail"), where + ".tail"));
        }
        throw new BadArgumentException(where
                + " must be a list [head, relation, tail] or a map {head, relation, tail}, got "
                + describe(entry));
    }

    private static String requireString(Object part, String where) {
        if (part instanceof String text) {
            return text;
        }
        throw new BadArgumentException(where + " must be a string, got " + describe(part));
    }

    /** Cypher-flavoured type names, since the caller wrote Cypher, not Java. */
    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Number) {
            return "a number (" + value + ")";
        }
        if (value instanceof Boolean) {
            return "a boolean (" + value + ")";
        }
        if (value instanceof List<?>) {
            return "a list";
        }
        if (value instanceof Map<?, ?>) {
            return "a map";
        }
        return "a " + value.getClass().getSimpleName();
    }
}
