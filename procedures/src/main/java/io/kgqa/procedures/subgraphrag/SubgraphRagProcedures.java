package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The {@code kgqa.subgraphrag.*} namespace: SubgraphRAG retrieval inside the database.
 *
 * <p>{@code candidates} gives the candidate triples of some topic entities with their DDE codes (the
 * Python trainer reads its training data through it, so training and inference share one DDE);
 * {@code retrieve} embeds and links the question, scores every candidate with the trained ONNX model,
 * and streams the top K.
 *
 * <p>Each procedure checks its arguments and hands them to one algorithm class: {@link QuestionScorer}
 * (retrieve, walks), {@link CosineScoring} (cosine), {@link CandidateSubgraph} (candidates); {@link ScoredRows}
 * turns scored candidates into rows.
 */
public class SubgraphRagProcedures {

    public static final int DEFAULT_HOPS = 2;
    public static final int MAX_HOPS = 6;
    /** The most candidates a caller may ask for (config.maxCandidates; the default is Limits.ROW_CAP). */
    public static final int LIMIT_MAX_CANDIDATES = 5_000_000;
    public static final int DEFAULT_K = 100;

    private static final Set<String> CANDIDATE_KEYS = Set.of(
            "hops", "maxCandidates", "includeSeed", "failOnTruncation", "forwardRounds", "reverseRounds");
    private static final Set<String> RETRIEVE_KEYS = Set.of(
            "k", "kg", "model", "topicEntities", "questionEmbedding", "hops", "maxCandidates", "includeSeed",
            "failOnTruncation", "cacheEmbeddings", "select", "pathHops", "topicSpans");
    private static final Set<String> WALK_KEYS = Set.of(
            "k", "kg", "model", "topicEntities", "questionEmbedding", "hops", "maxCandidates", "includeSeed",
            "failOnTruncation", "cacheEmbeddings", "pathHops", "topicSpans", "rankBy");
    private static final Set<String> COSINE_KEYS = Set.of(
            "k", "questionEmbedding", "hops", "maxCandidates", "failOnTruncation", "cacheEmbeddings");

    @Context
    public Transaction tx;

    @Context
    public Log log;

    /**
     * One row of {@code kgqa.subgraphrag.candidates}. Record components: Neo4j maps them to YIELD columns.
     *
     * @param dde [code(head) ‖ code(tail)], each [s0 (if includeSeed)] ‖ f1 ‖ f2 ‖ r1 ‖ r2 of 2 numbers
     */
    public record Candidate(String head, String relation, String tail, String headId, String tailId,
                            List<Double> dde) {
    }

    /**
     * One row of {@code kgqa.subgraphrag.retrieve}.
     *
     * @param rank 1-based: 1 is the highest score
     */
    public record ScoredTriple(String head, String relation, String tail, double score, long rank) {
    }

    @Procedure(name = "kgqa.subgraphrag.candidates", mode = Mode.READ)
    @Description("kgqa.subgraphrag.candidates(kg :: STRING, topicIds :: LIST<STRING>, config = {} :: MAP)"
            + " :: (head, relation, tail, headId, tailId, dde :: LIST<FLOAT>) - SubgraphRAG's candidate triples:"
            + " every relationship within `hops` undirected hops of the topic entities (Entity ids of KG kg),"
            + " in breadth-first order, with its directional distance encoding dde = [code(head) ‖ code(tail)]."
            + " An entity's code is [s0] ‖ f1 ‖ f2 ‖ r1 ‖ r2 (2 numbers each): s0 the one-hot [not-topic, topic],"
            + " f(t+1) the mean of f(t) over in-edges (u->v), r(t+1) the mean of r(t) over out-edges, zeros when"
            + " there are none, computed on the candidate subgraph. config: hops (default 2), maxCandidates"
            + " (default " + Limits.ROW_CAP + "; beyond it the BFS is cut deterministically and a warning is logged, or with"
            + " failOnTruncation: true an error is raised), includeSeed (default true), forwardRounds and"
            + " reverseRounds (default 2).")
    public Stream<Candidate> candidates(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", CANDIDATE_KEYS);
        int hops = options.integer("hops", DEFAULT_HOPS, 1, MAX_HOPS);
        int maxCandidates = options.integer("maxCandidates", Limits.ROW_CAP, 1, LIMIT_MAX_CANDIDATES);
        boolean includeSeed = options.bool("includeSeed", true);
        boolean failOnTruncation = options.bool("failOnTruncation", false);
        int forward = options.integer("forwardRounds", Dde.DEFAULT_FORWARD_ROUNDS, 0, 8);
        int reverse = options.integer("reverseRounds", Dde.DEFAULT_REVERSE_ROUNDS, 0, 8);
        String kgName = KnowledgeGraphs.require(tx, kg, "kg");
        List<Node> topics = TopicEntities.byIds(tx, kgName, topicIds);

        CandidateSubgraph subgraph = CandidateSubgraph.collect(kgName, topics, hops, maxCandidates, failOnTruncation,
                log);
        double[][] codes = subgraph.entityCodes(forward, reverse, includeSeed);
        String[] names = new String[subgraph.nodes.size()];
        String[] entityIds = new String[subgraph.nodes.size()];
        for (int v = 0; v < names.length; v++) {
            Node node = subgraph.nodes.get(v);
            entityIds[v] = String.valueOf(node.getProperty("id", ""));
            names[v] = String.valueOf(node.getProperty("name", entityIds[v]));
        }
        return IntStream.range(0, subgraph.size()).mapToObj(i -> {
            int h = subgraph.heads[i];
            int t = subgraph.tails[i];
            List<Double> dde = new ArrayList<>(codes[h].length * 2);
            for (double x : codes[h]) {
                dde.add(x);
            }
            for (double x : codes[t]) {
                dde.add(x);
            }
            return new Candidate(names[h], subgraph.relationships.get(i).getType().name(), names[t],
                    entityIds[h], entityIds[t], dde);
        });
    }

    @Procedure(name = "kgqa.subgraphrag.retrieve", mode = Mode.READ)
    @Description("kgqa.subgraphrag.retrieve(question :: STRING, config = {} :: MAP) :: (head, relation, tail,"
            + " score, rank) - SubgraphRAG retrieval in the database: links the topic entities, embeds the"
            + " question (ONNX encoder), collects the candidate triples within `hops` of the topic entities,"
            + " scores each with the trained ONNX model over [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ DDE], and streams"
            + " the top k, highest score first (rank 1 = best). config: k (default 100, > 0); kg (default: the"
            + " only or most recently loaded complete KG); model (default: the KG's own, written by"
            + " `kgqa train all --kg KG`; a name: <kgqa.models.dir>/subgraphrag/<model>); topicEntities (names or ids; default: the"
            + " question's entities as kgqa.link.entities links them, at most " + Limits.LINKED_ENTITIES + "; a"
            + " question in which none is found is refused); topicSpans (the question's words that name the topic"
            + " entities, one per topicEntities name; default: the linked words, or the topicEntities texts);"
            + " questionEmbedding (the question's vector; default: embedded in the database, the topic entity"
            + " masked as the model was trained, see QuestionText.maskTopic, or for older models the question"
            + " without its brackets); hops, maxCandidates, includeSeed (defaults from the model's meta.json, else"
            + " 2, " + Limits.ROW_CAP + ", true); failOnTruncation (default false); cacheEmbeddings (default true:"
            + " entity embeddings are kept in memory per KG load, see EmbeddingCache); select (default 'top': the k best triples;"
            + " 'paths': every entity pathHops steps out gets its best walk, the walks fill k best first and"
            + " the best remaining triples the rest, rank giving that order, see PathSelection); pathHops"
            + " (default hops).")
    public Stream<ScoredTriple> retrieve(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", RETRIEVE_KEYS);
        boolean paths = options.either("select", "top", "paths").equals("paths");
        return rows(scored(question, options), paths ? ScoredRows::paths : ScoredRows::top);
    }

    /**
     * One row of {@code kgqa.subgraphrag.walks}: an end entity's best walk.
     *
     * @param rank       1-based: 1 is the best walk
     * @param score      the walk's sum of log-sigmoid triple scores: the log-probability that all its triples
     *                   are relevant
     * @param triplets   [head, relation, tail] of each step, from the topic entity outwards (a step may go
     *                   against a triple)
     * @param chainRank  1-based rank of the relation chain the walk follows (rankBy 'chain'); 1 for every walk
     *                   otherwise
     * @param chain      the chain's steps, each 'relation>' (head to tail) or 'relation<' (tail to head)
     * @param chainScore the chain's score (sum over steps of log mean sigmoid); the walk's own score with rankBy
     *                   'walk'
     */
    public record WalkRow(long rank, double score, String answer, List<List<String>> triplets,
                          List<Double> tripletScores, long chainRank, List<String> chain, double chainScore) {
    }

    @Procedure(name = "kgqa.subgraphrag.walks", mode = Mode.READ)
    @Description("kgqa.subgraphrag.walks(question :: STRING, config = {} :: MAP) :: (rank, score, answer, triplets,"
            + " tripletScores, chainRank, chain, chainScore) - SubgraphRAG's scored candidates read as reasoning"
            + " paths of pathHops steps (never into a topic entity). rankBy 'chain' (default): every relation"
            + " chain of pathHops steps is executed from the topic entities and scored by the sum over its steps of"
            + " log(mean sigmoid) of the triples it takes; each end's best walk along a chain is streamed, every"
            + " walk of the best chain (its ends are the answer set), then later chains' walks while their"
            + " distinct triples fit in k (see ChainSelection). rankBy 'walk': every entity pathHops steps out gets"
            + " its best walk (score = the sum of log-sigmoid of its triples' scores, never straight back over a"
            + " triple), streamed best first while their distinct triples fit in k (see PathSelection)."
            + " config: as for retrieve without select; pathHops (default hops); rankBy.")
    public Stream<WalkRow> walks(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", WALK_KEYS);
        boolean byWalk = options.either("rankBy", "chain", "walk").equals("walk");
        return rows(scored(question, options), byWalk ? ScoredRows::walks : ScoredRows::chainWalks);
    }

    @Procedure(name = "kgqa.subgraphrag.cosine", mode = Mode.READ)
    @Description("kgqa.subgraphrag.cosine(kg :: STRING, topicIds :: LIST<STRING>, config :: MAP) :: (head,"
            + " relation, tail, score, rank) - the untrained baseline of SubgraphRAG retrieval: the same candidate"
            + " triples as kgqa.subgraphrag.candidates, each scored cos(q, head) + cos(q, relation) + cos(q, tail)"
            + " from the stored embeddings (a missing embedding adds 0), and the top k streamed, highest score"
            + " first (rank 1 = best; ties keep breadth-first order). config: questionEmbedding (required, the"
            + " question's vector, as long as the KG's embeddings); k (default 100, > 0); hops (default 2);"
            + " maxCandidates (default " + Limits.ROW_CAP + ") and failOnTruncation (default false) as for candidates;"
            + " cacheEmbeddings (default true) as for retrieve.")
    public Stream<ScoredTriple> cosine(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", COSINE_KEYS);
        int k = options.integer("k", DEFAULT_K, 1, Integer.MAX_VALUE);
        int hops = options.integer("hops", DEFAULT_HOPS, 1, MAX_HOPS);
        int maxCandidates = options.integer("maxCandidates", Limits.ROW_CAP, 1, LIMIT_MAX_CANDIDATES);
        boolean failOnTruncation = options.bool("failOnTruncation", false);
        boolean cacheEmbeddings = options.bool("cacheEmbeddings", true);
        float[] question = options.vector("questionEmbedding");
        if (question == null) {
            throw new BadArgumentException("config.questionEmbedding is required: the question's vector");
        }
        String kgName = KnowledgeGraphs.require(tx, kg, "kg");
        List<Node> topics = TopicEntities.byIds(tx, kgName, topicIds);
        Scored scored = new CosineScoring(tx, log).score(kgName, topics, question, k, hops, maxCandidates,
                failOnTruncation, cacheEmbeddings);
        return rows(scored, ScoredRows::top);
    }

    /** The question's candidates scored by its trained model (retrieve, walks); null when they are none. */
    private Scored scored(String question, Options options) {
        return new QuestionScorer(tx, log).score(ScoringConfig.of(tx, question, options));
    }

    /** No rows for a question whose topic entities have no triple, rather than an error. */
    private static <T> Stream<T> rows(Scored scored, Function<Scored, List<T>> rows) {
        return scored == null ? Stream.empty() : rows.apply(scored).stream();
    }
}
