package io.kgqa.procedures.gsr;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;

/**
 * Walks a relation chain from topic entities with the Core API, with the semantics of SG-RAG's path template
 * ({@code cypher_templates/sgrag/path.cypher.j2}): each step follows its relationship type along or against
 * the KG's direction, a path uses a relationship at most once, no node after the start is the topic entity
 * itself (MetaQA: "the other films of the director of X" never answers X), and at most {@code maxPaths}
 * paths are returned in all.
 */
public final class ChainWalker {

    /** One walked path: its start, its relationships in order, and its end node. */
    public record Path(Node topic, List<Relationship> relationships, Node end) {
    }

    private final int maxPaths;

    public ChainWalker(int maxPaths) {
        if (maxPaths < 1) {
            throw new IllegalArgumentException("maxPaths must be at least 1, got " + maxPaths);
        }
        this.maxPaths = maxPaths;
    }

    /** The chain's paths from each topic in turn; {@link #truncated} says whether maxPaths cut them. */
    public List<Path> walk(List<Node> topics, Chain chain) {
        List<Path> paths = new ArrayList<>();
        for (Node topic : topics) {
            if (paths.size() >= maxPaths) {
                break;
            }
            extend(topic, topic, chain.steps(), 0, new ArrayList<>(), new HashSet<>(), paths);
        }
        return paths;
    }

    public boolean truncated(List<Path> paths) {
        return paths.size() >= maxPaths;
    }

    private void extend(Node topic, Node at, List<Chain.Step> steps, int depth, List<Relationship> walked,
            Set<String> used, List<Path> paths) {
        if (depth == steps.size()) {
            paths.add(new Path(topic, List.copyOf(walked), at));
            return;
        }
        Chain.Step step = steps.get(depth);
        Direction direction = step.out() ? Direction.OUTGOING : Direction.INCOMING;
        for (Relationship r : at.getRelationships(direction, RelationshipType.withName(step.relation()))) {
            if (paths.size() >= maxPaths) {
                return;
            }
            Node other = r.getOtherNode(at);
            if (other.equals(topic) || !used.add(r.getElementId())) {
                continue;
            }
            walked.add(r);
            extend(topic, other, steps, depth + 1, walked, used, paths);
            walked.remove(walked.size() - 1);
            used.remove(r.getElementId());
        }
    }
}
