package io.kgqa.procedures.triplets;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.procedure.UserFunction;

/**
 * The {@code kgqa.triplets.*} namespace: the post-processing every retriever shares before the
 * triplets reach an answerer, so that dedup and order are defined in one place.
 *
 * <p>These are pure functions of their arguments and never touch the graph; they live in the
 * database so that Cypher-only users (no Python) get the same prompt order as {@code kgqa ask}.
 */
public class TripletProcedures {

    /**
     * One output row of {@code kgqa.triplets.dedupOrder}. Record components: Neo4j maps them to YIELD columns.
     *
     * @param distance BFS hops from the nearest topic entity; null when the triplet is not connected to any
     * @param position 0-based rank in the output
     */
    public record OrderedTriplet(String head, String relation, String tail, Long distance, long position) {
    }

    @Procedure(name = "kgqa.triplets.dedupOrder", mode = Mode.READ)
    @Description("kgqa.triplets.dedupOrder(triplets :: LIST<LIST<STRING>>, topicEntities :: LIST<STRING>)"
            + " - SG-RAG MOT ordering. Removes exact duplicate [head, relation, tail] triplets (the first"
            + " occurrence is kept; {head, relation, tail} maps are accepted too), then orders them by"
            + " distance = min(dist(head), dist(tail)), where dist is the BFS hop count from the nearest"
            + " topic entity (dist(topic) = 0) over the undirected graph formed by the triplets themselves."
            + " Topic entities are matched exactly against heads and tails. Ties keep input order."
            + " Triplets not connected to any topic entity come last, in input order, with distance null."
            + " position is the 0-based output rank. Does not read the graph.")
    public Stream<OrderedTriplet> dedupOrder(
            @Name("triplets") List<Object> triplets,
            @Name("topicEntities") List<Object> topicEntities) {
        List<Triplet> parsed = Triplet.parseAll(triplets, "triplets");
        List<String> topics = parseTopicEntities(topicEntities);

        List<TripletOrdering.Ranked> ranked = TripletOrdering.dedupOrder(parsed, topics);
        return IntStream.range(0, ranked.size()).mapToObj(position -> {
            TripletOrdering.Ranked row = ranked.get(position);
            Long distance = row.distance() == TripletOrdering.UNREACHABLE ? null : (long) row.distance();
            Triplet t = row.triplet();
            return new OrderedTriplet(t.head(), t.relation(), t.tail(), distance, position);
        });
    }

    @UserFunction(name = "kgqa.triplets.format")
    @Description("kgqa.triplets.format(triplets :: LIST<LIST<STRING>>) :: STRING - the triplets as SG-RAG"
            + " prompt text: one 'head|relation|tail' line per triplet, in the given order, joined by"
            + " newlines (no trailing newline; '' for an empty list). Values are not escaped. Does not"
            + " deduplicate or reorder: call kgqa.triplets.dedupOrder first.")
    public String format(@Name("triplets") List<Object> triplets) {
        return Triplet.parseAll(triplets, "triplets").stream()
                .map(Triplet::toLine)
                .collect(Collectors.joining("\n"));
    }

    /**
     * Declared as {@code LIST<ANY>} rather than {@code LIST<STRING>} so that a wrong element type
     * is reported here, with its index, instead of failing later inside Neo4j's type conversion.
     */
    private static List<String> parseTopicEntities(List<Object> topicEntities) {
        if (topicEntities == null) {
            throw new BadArgumentException(
                    "topicEntities must be a list of entity names (use [] for none), got null");
        }
        String[] names = new String[topicEntities.size()];
        int index = 0;
        for (Object entry : topicEntities) {
            if (!(entry instanceof String name)) {
                throw new BadArgumentException("topicEntities[" + index + "] must be a string, got "
                        + Triplet.describe(entry));
            }
            names[index++] = name;
        }
        return List.of(names);
    }
}
