package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Options;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;

/** Reading a pattern and its pinned entities from procedure arguments, with errors that name the edge. */
final class Patterns {

    private static final Label ENTITY = Label.label("Entity");

    private Patterns() {
    }

    static List<PatternGraph.RawEdge> parse(List<Object> pattern) {
        if (pattern == null) {
            throw new BadArgumentException("pattern must be a list of edges [head, relation, tail], got null");
        }
        List<PatternGraph.RawEdge> out = new ArrayList<>();
        for (int i = 0; i < pattern.size(); i++) {
            Object edge = pattern.get(i);
            String where = "pattern edge " + (i + 1);
            if (edge instanceof List<?> list) {
                if (list.size() != 3) {
                    throw new BadArgumentException(where + " " + list + ": an edge is [head, relation, tail] (3"
                            + " strings), got " + list.size() + " items");
                }
                out.add(new PatternGraph.RawEdge(text(list.get(0), where), text(list.get(1), where),
                        text(list.get(2), where)));
            } else if (edge instanceof Map<?, ?> map) {
                out.add(new PatternGraph.RawEdge(text(map.get("head"), where), text(map.get("relation"), where),
                        text(map.get("tail"), where)));
            } else {
                throw new BadArgumentException(where + ": an edge is [head, relation, tail] or {head, relation,"
                        + " tail}, got " + Options.describe(edge));
            }
        }
        return out;
    }

    private static String text(Object value, String where) {
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw new BadArgumentException(where + ": nodes and relations are strings, got " + Options.describe(value));
        }
        return s;
    }

    /** config.entities: pattern node text -> entity ids of the KG; each id must exist, each node must be known. */
    static Map<String, List<Node>> pins(Transaction tx, String kg, Options options, PatternGraph graph) {
        Map<String, List<Node>> pins = new HashMap<>();
        if (!options.has("entities")) {
            return pins;
        }
        Object raw = options.raw("entities");
        if (!(raw instanceof Map<?, ?> map)) {
            throw new BadArgumentException("config.entities must be a map of pattern node -> list of entity ids,"
                    + " got " + Options.describe(raw));
        }
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String node = String.valueOf(e.getKey());
            boolean known = graph.nodes.stream().anyMatch(n -> n.text().equals(node) && !n.variable());
            if (!known) {
                throw new BadArgumentException("config.entities: '" + node + "' is not a known (non-UNKNOWN) node"
                        + " of the pattern");
            }
            List<Node> nodes = new ArrayList<>();
            Object ids = e.getValue();
            List<?> list = ids instanceof List<?> l ? l : List.of(ids);
            for (Object id : list) {
                Node n;
                try (var found = tx.findNodes(ENTITY, "kg", kg, "id", String.valueOf(id))) {
                    n = found.hasNext() ? found.next() : null;
                }
                if (n == null) {
                    throw new BadArgumentException("config.entities." + node + ": no entity with id '" + id
                            + "' in KG '" + kg + "'");
                }
                nodes.add(n);
            }
            pins.put(node, nodes);
        }
        return pins;
    }
}
