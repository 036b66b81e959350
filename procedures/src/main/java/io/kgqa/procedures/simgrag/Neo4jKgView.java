package io.kgqa.procedures.simgrag;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;

/** The matcher's view of one KG in Neo4j: relationships between {@code :Entity} nodes of that KG only. */
final class Neo4jKgView implements KgView<Node> {

    private final String kg;
    private final Map<Node, Boolean> inKg = new HashMap<>();
    private final Map<Node, String> keys = new HashMap<>();
    private final Map<Set<String>, RelationshipType[]> typeArrays = new IdentityHashMap<>();

    Neo4jKgView(String kg) {
        this.kg = kg;
    }

    @Override
    public void forEachHop(Node node, Set<String> types, HopConsumer<Node> consumer) {
        Iterable<Relationship> relationships = types == null
                ? node.getRelationships(Direction.BOTH)
                : node.getRelationships(Direction.BOTH, typeArrays.computeIfAbsent(types,
                        t -> t.stream().map(RelationshipType::withName).toArray(RelationshipType[]::new)));
        for (Relationship r : relationships) {
            Node other = r.getOtherNode(node);
            if (other.equals(node) || !inKg.computeIfAbsent(other, n -> Objects.equals(kg, n.getProperty("kg", null)))) {
                continue;
            }
            consumer.accept(new Hop<>(r.getType().name(), other, r.getStartNode().equals(node)));
        }
    }

    @Override
    public String key(Node node) {
        return keys.computeIfAbsent(node, n -> String.valueOf(n.getProperty("id", n.getElementId())));
    }
}
