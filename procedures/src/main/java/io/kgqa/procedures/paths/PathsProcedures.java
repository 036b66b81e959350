package io.kgqa.procedures.paths;

import io.kgqa.procedures.gsr.Chain;
import io.kgqa.procedures.gsr.ChainWalker;
import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Entities;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import java.util.ArrayList;
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
 * entities. {@code walkable} lists the chains a question-to-path scorer chooses among; {@code ends} says where
 * several chains lead, in one call and without a query plan per chain (a plan is compiled the first time a
 * query text is seen: 45-75 ms for each chain's Cypher template on FB15k-237, where the walk takes 2-5 ms).
 */
public class PathsProcedures {

    public static final int DEFAULT_MAX_VIA = 40;
    public static final int DEFAULT_FANOUT = 400;
    private static final Set<String> KEYS = Set.of("maxVia", "fanout");
    private static final Set<String> ENDS_KEYS = Set.of("maxPaths");

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
            + " LIST<LIST<STRING>>, key :: STRING) - every relation chain of one or two steps that can be walked"
            + " from the topic entities (Entity ids of KG kg), each step [relation, 'out' | 'in'] along or against"
            + " the relationship (key: the same as 'rel>|rel<'); no node after the start is that start, and a"
            + " second step never ends where it began. Each chain once, a topic's one-step chains before its"
            + " two-step ones. A first step that reaches more than maxVia middle entities is extended from its"
            + " first maxVia of them only, and a"
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

    /**
     * One row of {@code kgqa.paths.ends}.
     *
     * @param key   the chain, as given
     * @param ends  the distinct names of the entities its first maxPaths paths end at, in the order reached
     * @param paths how many paths were walked: maxPaths when the guard cut them
     */
    public record Ends(String key, List<String> ends, long paths) {
    }

    @Procedure(name = "kgqa.paths.ends", mode = Mode.READ)
    @Description("kgqa.paths.ends(kg :: STRING, topicIds :: LIST<STRING>, chains :: LIST<STRING>, config = {} ::"
            + " MAP) :: (key :: STRING, ends :: LIST<STRING>, paths :: INTEGER) - where each chain leads from the"
            + " topic entities (Entity ids of KG kg), with the semantics of SG-RAG's path template"
            + " (the paths cypher_templates/sgrag/path.cypher.j2 walks): a chain is a key 'rel>|rel<' (> along"
            + " the relationship, < against it), a path uses a relationship once and never comes back to its"
            + " topic, and at most maxPaths paths are walked per chain, from each topic in turn. One row per"
            + " chain, in the order given: the distinct names of the ends, and how many paths there were."
            + " config: maxPaths (default " + Limits.ROW_CAP + ", at least 1).")
    public Stream<Ends> ends(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name("chains") List<Object> chains,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", ENDS_KEYS);
        int maxPaths = options.integer("maxPaths", Limits.ROW_CAP, 1, Integer.MAX_VALUE);
        List<Node> topics = TopicEntities.byIds(tx, KnowledgeGraphs.require(tx, kg, "kg"), topicIds);
        List<String> keys = chainKeys(chains);
        List<Chain> parsed = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            parsed.add(parse(keys.get(i), "chains[" + i + "]"));
        }
        ChainWalker walker = new ChainWalker(maxPaths);
        List<Ends> rows = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            List<ChainWalker.Path> paths = walker.walk(topics, parsed.get(i));
            Set<String> ends = new LinkedHashSet<>();
            for (ChainWalker.Path path : paths) {
                ends.add(Entities.name(path.end()));
            }
            rows.add(new Ends(key, List.copyOf(ends), paths.size()));
        }
        return rows.stream();
    }

    private static List<String> chainKeys(List<Object> chains) {
        if (chains == null) {
            throw new BadArgumentException("chains must be a list of chain keys such as 'rel>|rel<', got null");
        }
        List<String> keys = new ArrayList<>(chains.size());
        for (int i = 0; i < chains.size(); i++) {
            if (!(chains.get(i) instanceof String key) || key.isBlank()) {
                throw new BadArgumentException("chains[" + i + "] must be a chain key such as 'rel>|rel<', got "
                        + Options.describe(chains.get(i)));
            }
            keys.add(key);
        }
        return keys;
    }

    /** A chain key ({@code "born_in>|born_in<"}) as steps; an error naming {@code where} and the bad part. */
    static Chain parse(String key, String where) {
        List<Chain.Step> steps = new ArrayList<>();
        for (String part : key.split("\\|", -1)) {
            String token = part.strip();
            if (token.length() < 2 || !(token.endsWith(">") || token.endsWith("<"))) {
                throw new BadArgumentException(where + " '" + key + "': '" + part
                        + "' is not a relation followed by > or <");
            }
            steps.add(new Chain.Step(token.substring(0, token.length() - 1), token.endsWith(">")));
        }
        return new Chain(steps, 0.0);
    }
}
