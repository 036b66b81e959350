package io.kgqa.procedures.paths;

import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Options;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The {@code kgqa.paths.*} namespace: what every chain-following method asks of the graph around its topic
 * entities. {@code walkable} lists the chains a question-to-path scorer chooses among.
 */
public class PathsProcedures {

    public static final int DEFAULT_MAX_VIA = 40;
    public static final int DEFAULT_FANOUT = 400;
    private static final Set<String> KEYS = Set.of("maxVia", "fanout");

    @Context
    public Transaction tx;

    /**
     * One row of {@code kgqa.paths.walkable}.
     *
     * @param chain the steps, as {@code [[relation, "out" | "in"], …]}
     * @param key   the same as one string, {@code "rel>|rel<"}: a few thousand of them cross Bolt as one list
     *              in half the time the nested lists take
     */
    public record Walkable(List<List<String>> chain, String key) {
    }

    @Procedure(name = "kgqa.paths.walkable", mode = Mode.READ)
    @Description("kgqa.paths.walkable(kg :: STRING, topicIds :: LIST<STRING>, config = {} :: MAP) :: (chain ::"
            + " LIST<LIST<STRING>>, key :: STRING) - every relation chain of one or two steps that can be walked from the topic"
            + " entities (Entity ids of KG kg), each step [relation, 'out' | 'in'] along or against the"
            + " relationship (key: the same as 'rel>|rel<'); no node after the start is that start, and a second step never ends where it"
            + " began. Each chain once, a topic's one-step chains before its two-step ones. A first step that"
            + " reaches more than maxVia middle entities is extended from its first maxVia of them only, and a"
            + " middle's second steps are read off its first"
            + " fanout relationships that lead on. config: maxVia (default 40), fanout (default 400), each at"
            + " least 1.")
    public Stream<Walkable> walkable(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", KEYS);
        int maxVia = options.integer("maxVia", DEFAULT_MAX_VIA, 1, Integer.MAX_VALUE);
        int fanout = options.integer("fanout", DEFAULT_FANOUT, 1, Integer.MAX_VALUE);
        List<Node> topics = TopicEntities.byIds(tx, KnowledgeGraphs.require(tx, kg, "kg"), topicIds);
        Set<List<WalkableChains.Step>> chains = new LinkedHashSet<>();
        for (Node topic : new LinkedHashSet<>(topics)) {
            chains.addAll(WalkableChains.from(topic, maxVia, fanout));
        }
        return chains.stream().map(chain -> new Walkable(
                chain.stream().map(WalkableChains.Step::asList).toList(),
                String.join("|", chain.stream().map(WalkableChains.Step::token).toList())));
    }
}
