package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Entities;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The {@code kgqa.simgrag.*} namespace: SimGRAG's pattern-graph retrieval inside the database.
 *
 * <p>{@code match} finds the top-k subgraphs of a KG that match a pattern graph by Graph Semantic Distance;
 * {@code pattern} builds a pattern from a question without an LLM; {@code retrieve} does both.
 */
public class SimGragProcedures {

    public static final int DEFAULT_K = 3;
    public static final int DEFAULT_CANDIDATES = 16;
    public static final int DEFAULT_MAX_EDGES = 8;
    public static final int DEFAULT_MAX_MATCHES = 100;
    public static final long DEFAULT_MAX_EXPANSIONS = 2_000_000;

    private static final Label ENTITY = Label.label("Entity");
    static final Set<String> MATCH_KEYS = Set.of("kg", "k", "nodeCandidates", "relationCandidates", "maxEdges",
            "directed", "injective", "prune", "ties", "maxMatches", "maxExpansions", "entities");

    @Context
    public Transaction tx;

    @Context
    public Log log;

    /** One row of {@code kgqa.simgrag.match}. */
    public static class MatchRow {
        /** 1-based within the component; matches that tie share a distance but not a rank. */
        public long rank;
        public double distance;
        /** 1-based connected component of the pattern this match is for. */
        public long component;
        /** pattern node text -> matched entity name, for the component's nodes. */
        public Map<String, Object> bindings;
        /** pattern node text -> matched entity id. */
        public Map<String, Object> ids;
        /** the matched KG triples [head, relation, tail] in the KG's direction, in search order. */
        public List<List<String>> triplets;
        /** partial matches the search extended for this component (the cost of the search). */
        public long expansions;
        /** false when config.maxExpansions stopped the search early: the top-k may be incomplete. */
        public boolean exhaustive;

        public MatchRow(SimGragSearch.ComponentMatch m, PatternGraph pattern) {
            this.rank = m.rank();
            this.distance = m.match().cost();
            this.component = m.component();
            this.bindings = new LinkedHashMap<>();
            this.ids = new LinkedHashMap<>();
            for (int i = 0; i < pattern.nodes.size(); i++) {
                Node n = m.match().binding().get(i);
                if (n != null) {
                    bindings.put(pattern.nodes.get(i).text(), n.getProperty("name", n.getProperty("id", "")));
                    ids.put(pattern.nodes.get(i).text(), n.getProperty("id", ""));
                }
            }
            this.triplets = new ArrayList<>();
            for (PatternMatcher.MatchedEdge<Node> e : m.match().edges()) {
                triplets.add(List.of(Entities.name(e.head()), e.type(), Entities.name(e.tail())));
            }
            this.expansions = m.expansions();
            this.exhaustive = m.exhaustive();
        }
    }

    @Procedure(name = "kgqa.simgrag.match", mode = Mode.READ)
    @Description("kgqa.simgrag.match(pattern :: LIST<ANY>, config = {} :: MAP) :: (rank, distance, component,"
            + " bindings, ids, triplets, expansions, exhaustive) - SimGRAG's top-k subgraph matching by Graph"
            + " Semantic Distance. pattern: a list of edges, each [head, relation, tail] or {head, relation, tail};"
            + " a node starting with UNKNOWN or ? is a variable (cost 0), any other node is matched to the"
            + " config.nodeCandidates (default 16) entities nearest to its text in the entity_embedding index plus"
            + " those named exactly so; a relation is matched to the config.relationCandidates (default 16)"
            + " nearest relations (UNKNOWN or ?: any relation, cost 0). The distance of a match is the sum of the"
            + " L2 distances of its matched nodes and relations. Search: the known node with the fewest candidates"
            + " first, the pattern's edges in depth-first order, cheapest extension first, and (config.prune,"
            + " default true) a branch is cut when its distance plus a lower bound on the edges left cannot beat"
            + " the k-th best. A disconnected pattern is matched one component at a time. config: kg (default:"
            + " the only or latest KG); k (default 3); ties (default true: matches as good as the k-th are kept,"
            + " up to maxMatches, default 100); directed (default false: an edge matches a KG relationship either"
            + " way, as the paper stores its KG; true: head -> tail only); injective (default true: distinct pattern"
            + " nodes match distinct entities); maxEdges (default 8); maxExpansions (default 2000000: the search"
            + " stops there and reports exhaustive = false); entities (map of pattern node text -> list of entity"
            + " ids: use these instead of the vector search).")
    public Stream<MatchRow> match(
            @Name("pattern") List<Object> pattern,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        TextLimits.within(pattern, "pattern");
        Options options = new Options(config, "config", MATCH_KEYS);
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        PatternGraph graph = PatternGraph.of(Patterns.parse(pattern), options.integer("maxEdges", DEFAULT_MAX_EDGES, 1, 64));
        Map<String, List<Node>> pins = Patterns.pins(tx, kg, options, graph);
        return SimGragSearch.run(tx, kg, graph, pins, settings(options)).stream().map(m -> new MatchRow(m, graph));
    }

    /** One row of {@code kgqa.simgrag.pattern}. */
    public static class PatternRow {
        public List<List<String>> edges;
        /** the pattern node the question asks for */
        public String answer;
        /** known pattern node -> the id of the entity it was linked to */
        public Map<String, Object> entities;
        /** what the builder read in the question */
        public List<String> notes;

        PatternRow(QuestionPatterns.QuestionPattern p) {
            this.edges = p.built().edges().stream().map(e -> List.of(e.head(), e.relation(), e.tail())).toList();
            this.answer = p.built().answer();
            this.entities = new LinkedHashMap<>(p.entityIds());
            this.notes = p.built().notes();
        }
    }

    /** One row of {@code kgqa.simgrag.retrieve}. */
    public static class RetrieveRow {
        public long rank;
        public double distance;
        /** the entity matched to the node the question asks for */
        public String answer;
        public String answerId;
        public Map<String, Object> bindings;
        public List<List<String>> triplets;
        public List<List<String>> pattern;
        public long expansions;
        public boolean exhaustive;

        RetrieveRow(MatchRow m, String answerNode, List<List<String>> pattern) {
            this.rank = m.rank;
            this.distance = m.distance;
            this.answer = m.bindings.containsKey(answerNode) ? String.valueOf(m.bindings.get(answerNode)) : null;
            this.answerId = m.ids.containsKey(answerNode) ? String.valueOf(m.ids.get(answerNode)) : null;
            this.bindings = m.bindings;
            this.triplets = m.triplets;
            this.pattern = pattern;
            this.expansions = m.expansions;
            this.exhaustive = m.exhaustive;
        }
    }

    @Procedure(name = "kgqa.simgrag.pattern", mode = Mode.READ)
    @Description("kgqa.simgrag.pattern(question :: STRING, config = {} :: MAP) :: (edges, answer, entities, notes)"
            + " - the SimGRAG pattern graph of a question, built without an LLM for any loaded KG: the entities"
            + " kgqa.link.entities links are the known nodes (a question in which none is found is refused), the"
            + " question's words that name a relation of the KG (embedding similarity to the relation texts, or a"
            + " shared stem) are the edges, chained from the"
            + " entity in the order English attaches them, with sharing words (share, same, co-, also) making a"
            + " round trip; answer is the node asked for. config: kg (default: the only or latest KG);"
            + " topicEntities (names or ids instead of linking); topicSpans (with topicEntities: the words each"
            + " was linked from, so that entities from one span share a node and numbers become nodes); bridge"
            + " (default true: an entity without a relationship of its first relation gets a hop of any relation"
            + " first).")
    public Stream<PatternRow> pattern(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        TextLimits.question(question, "question");
        Options options = new Options(config, "config", Set.of("kg", "topicEntities", "topicSpans", "bridge"));
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        List<String> given = options.strings("topicEntities");
        List<String> spans = options.strings("topicSpans");
        boolean bridge = options.bool("bridge", true);
        requireQuestion(question);
        List<TopicEntities.Topic> topics = TopicEntities.resolve(tx, kg, log, question, given, spans).entities();
        return Stream.of(new PatternRow(QuestionPatterns.build(tx, kg, question, topics, literals(given, spans),
                bridge)));
    }

    @Procedure(name = "kgqa.simgrag.retrieve", mode = Mode.READ)
    @Description("kgqa.simgrag.retrieve(question :: STRING, config = {} :: MAP) :: (rank, distance, answer,"
            + " answerId, bindings, triplets, pattern, expansions, exhaustive) - SimGRAG without an LLM: the"
            + " question's pattern from kgqa.simgrag.pattern, its known nodes tied to the linked entities, matched"
            + " by kgqa.simgrag.match; answer is the entity matched to the node the question asks for. When the"
            + " best match's answer is not the kind the question's wh-phrase asks for (\"which <things>\": the"
            + " tail of the relation the word names, or a head of the KG's relations), the pattern one hop"
            + " shorter or longer is matched instead, and pattern is the one used. config: kg,"
            + " topicEntities, and the options of kgqa.simgrag.match (k default 3, ties, directed, injective, prune,"
            + " maxMatches, maxExpansions, nodeCandidates, relationCandidates, maxEdges).")
    public Stream<RetrieveRow> retrieve(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        TextLimits.question(question, "question");
        java.util.Set<String> keys = new java.util.HashSet<>(MATCH_KEYS);
        keys.remove("entities");
        keys.add("topicEntities");
        keys.add("topicSpans");
        keys.add("bridge");
        Options options = new Options(config, "config", keys);
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        List<String> given = options.strings("topicEntities");
        List<String> spans = options.strings("topicSpans");
        SimGragSearch.Settings settings = settings(options);
        int maxEdges = options.integer("maxEdges", DEFAULT_MAX_EDGES, 1, 64);
        boolean bridge = options.bool("bridge", true);
        requireQuestion(question);
        List<TopicEntities.Topic> topics = TopicEntities.resolve(tx, kg, log, question, given, spans).entities();
        // An entity linked by mistake ("camera" in "who was behind the camera on Renoir") can make the pattern
        // unmatchable; then the least confident entity (the last one) is dropped and the question tried again.
        while (true) {
            QuestionPatterns.QuestionPattern built = QuestionPatterns.build(tx, kg, question, topics,
                    literals(given, spans), bridge);
            PatternGraph graph = PatternGraph.of(built.built().edges(), maxEdges);
            List<List<String>> edges = new PatternRow(built).edges;
            String answer = built.built().answer();
            List<SimGragSearch.ComponentMatch> matches = SimGragSearch.run(tx, kg, graph, built.pins(), settings);
            AskedAnswer.Retry longer = AskedAnswer.retry(tx, kg, built.built(), graph, matches, built.pins(),
                    settings, maxEdges, QuestionPatterns.relationTexts(tx, kg));
            if (longer != null) {
                List<List<String>> longerEdges = longer.edges().stream()
                        .map(e -> List.of(e.head(), e.relation(), e.tail())).toList();
                return longer.matches().stream()
                        .map(m -> new RetrieveRow(new MatchRow(m, longer.graph()), answer, longerEdges));
            }
            if (!matches.isEmpty() || built.entityIds().size() <= 1 || topics.size() <= 1) {
                return matches.stream().map(m -> new RetrieveRow(new MatchRow(m, graph), answer, edges));
            }
            topics = topics.subList(0, topics.size() - 1);
        }
    }

    /**
     * Numbers of the question that name entities join the pattern unless the caller named the entities without
     * the words that name them: then which numbers those words cover is unknown.
     */
    private static boolean literals(List<String> given, List<String> spans) {
        return given == null || spans != null;
    }

    private static void requireQuestion(String question) {
        if (question == null || question.isBlank()) {
            throw new BadArgumentException("question must not be empty");
        }
    }

    static SimGragSearch.Settings settings(Options options) {
        int k = options.integer("k", DEFAULT_K, 1, 10_000);
        return new SimGragSearch.Settings(
                options.integer("nodeCandidates", DEFAULT_CANDIDATES, 1, 4096),
                options.integer("relationCandidates", DEFAULT_CANDIDATES, 1, 4096),
                new PatternMatcher.Options(k, options.bool("directed", false), options.bool("injective", true),
                        options.bool("prune", true), options.bool("ties", true),
                        options.integer("maxMatches", Math.max(DEFAULT_MAX_MATCHES, k), k, 1_000_000),
                        options.integer("maxExpansions", (int) DEFAULT_MAX_EXPANSIONS, 1, Integer.MAX_VALUE)));
    }
}
