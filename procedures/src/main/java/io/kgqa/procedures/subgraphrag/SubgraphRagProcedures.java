package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.linking.EntityLinker;
import io.kgqa.procedures.linking.QuestionText;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.TextFunctions;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.EmbeddingCache;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import io.kgqa.procedures.util.TopicEntities;
import io.kgqa.procedures.util.Vectors;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
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
 */
public class SubgraphRagProcedures {

    public static final int DEFAULT_HOPS = 2;
    public static final int MAX_HOPS = 6;
    public static final int DEFAULT_MAX_CANDIDATES = 20_000;
    public static final int LIMIT_MAX_CANDIDATES = 5_000_000;
    public static final int DEFAULT_K = 100;

    /** Entities linked from a question without config.topicEntities, as kgqa.link.entities gives them by default. */
    public static final int LINKED_TOPICS = 3;

    private static final Label RELATION = Label.label("Relation");

    private static final Set<String> CANDIDATE_KEYS = Set.of(
            "hops", "maxCandidates", "includeSeed", "failOnTruncation", "forwardRounds", "reverseRounds");
    private static final Set<String> RETRIEVE_KEYS = Set.of(
            "k", "kg", "model", "topicEntities", "questionEmbedding", "hops", "maxCandidates", "includeSeed",
            "failOnTruncation", "cacheEmbeddings", "select", "pathHops", "topicSpans");
    private static final Set<String> WALK_KEYS = Set.of(
            "k", "kg", "model", "topicEntities", "questionEmbedding", "hops", "maxCandidates", "includeSeed",
            "failOnTruncation", "cacheEmbeddings", "pathHops", "topicSpans", "rankBy");
    private static final Set<String> WALK_RANKINGS = Set.of("chain", "walk");
    private static final Set<String> SELECTIONS = Set.of("top", "paths");
    private static final Set<String> COSINE_KEYS = Set.of(
            "k", "questionEmbedding", "hops", "maxCandidates", "failOnTruncation", "cacheEmbeddings");

    @Context
    public Transaction tx;

    @Context
    public Log log;

    /** One row of {@code kgqa.subgraphrag.candidates}. Public fields: Neo4j maps them to YIELD columns. */
    public static class Candidate {
        public String head;
        public String relation;
        public String tail;
        public String headId;
        public String tailId;
        /** [code(head) ‖ code(tail)], each [s0 (if includeSeed)] ‖ f1 ‖ f2 ‖ r1 ‖ r2 of 2 numbers. */
        public List<Double> dde;

        public Candidate(String head, String relation, String tail, String headId, String tailId, List<Double> dde) {
            this.head = head;
            this.relation = relation;
            this.tail = tail;
            this.headId = headId;
            this.tailId = tailId;
            this.dde = dde;
        }
    }

    /** One row of {@code kgqa.subgraphrag.retrieve}. */
    public static class ScoredTriple {
        public String head;
        public String relation;
        public String tail;
        public double score;
        /** 1-based: 1 is the highest score. */
        public long rank;

        public ScoredTriple(String head, String relation, String tail, double score, long rank) {
            this.head = head;
            this.relation = relation;
            this.tail = tail;
            this.score = score;
            this.rank = rank;
        }
    }

    @Procedure(name = "kgqa.subgraphrag.candidates", mode = Mode.READ)
    @Description("kgqa.subgraphrag.candidates(kg :: STRING, topicIds :: LIST<STRING>, config = {} :: MAP)"
            + " :: (head, relation, tail, headId, tailId, dde :: LIST<FLOAT>) - SubgraphRAG's candidate triples:"
            + " every relationship within `hops` undirected hops of the topic entities (Entity ids of KG kg),"
            + " in breadth-first order, with its directional distance encoding dde = [code(head) ‖ code(tail)]."
            + " An entity's code is [s0] ‖ f1 ‖ f2 ‖ r1 ‖ r2 (2 numbers each): s0 the one-hot [not-topic, topic],"
            + " f(t+1) the mean of f(t) over in-edges (u->v), r(t+1) the mean of r(t) over out-edges, zeros when"
            + " there are none, computed on the candidate subgraph. config: hops (default 2), maxCandidates"
            + " (default 20000; beyond it the BFS is cut deterministically and a warning is logged, or with"
            + " failOnTruncation: true an error is raised), includeSeed (default true), forwardRounds and"
            + " reverseRounds (default 2).")
    public Stream<Candidate> candidates(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", CANDIDATE_KEYS);
        int hops = options.integer("hops", DEFAULT_HOPS, 1, MAX_HOPS);
        int maxCandidates = options.integer("maxCandidates", DEFAULT_MAX_CANDIDATES, 1, LIMIT_MAX_CANDIDATES);
        boolean includeSeed = options.bool("includeSeed", true);
        boolean failOnTruncation = options.bool("failOnTruncation", false);
        int forward = options.integer("forwardRounds", Dde.DEFAULT_FORWARD_ROUNDS, 0, 8);
        int reverse = options.integer("reverseRounds", Dde.DEFAULT_REVERSE_ROUNDS, 0, 8);
        String kgName = KnowledgeGraphs.require(tx, kg, "kg");
        List<Node> topics = TopicEntities.byIds(tx, kgName, topicIds);

        CandidateSubgraph subgraph = collect(kgName, topics, hops, maxCandidates, failOnTruncation);
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
            + " question's entities as kgqa.link.entities links them, at most 3); topicSpans (the question's"
            + " words that name the topic entities; default: the linked words, or the topicEntities texts);"
            + " questionEmbedding (the question's vector; default: embedded in the database, the topic entity"
            + " masked as the model was trained, see QuestionText.maskTopic, or for older models the question"
            + " without its brackets); hops, maxCandidates, includeSeed (defaults from the model's meta.json, else 2,"
            + " 20000, true); failOnTruncation (default false); cacheEmbeddings (default true: entity embeddings"
            + " are kept in memory per KG load, see EmbeddingCache); select (default 'top': the k best triples;"
            + " 'paths': every entity pathHops steps out gets its best walk, the walks fill k best first and"
            + " the best remaining triples the rest, rank giving that order, see PathSelection); pathHops"
            + " (default hops).")
    public Stream<ScoredTriple> retrieve(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", RETRIEVE_KEYS);
        String select = options.string("select", "top");
        if (!SELECTIONS.contains(select)) {
            throw new BadArgumentException("config.select must be 'top' or 'paths', got '" + select + "'");
        }
        Scored scored = scoreQuestion(question, options);
        if (scored == null) {
            return Stream.empty();
        }
        CandidateSubgraph subgraph = scored.subgraph();
        if (select.equals("paths")) {
            int[] chosen = PathSelection.select(subgraph.heads, subgraph.tails, scored.scores(), subgraph.topic,
                    scored.pathHops(), scored.k());
            return rows(subgraph, scored.scores(), Arrays.stream(chosen).boxed().toArray(Integer[]::new), scored.k())
                    .stream();
        }
        return topK(subgraph, scored.scores(), scored.k()).stream();
    }

    /** One row of {@code kgqa.subgraphrag.walks}: an end entity's best walk. */
    public static class WalkRow {
        /** 1-based: 1 is the best walk. */
        public long rank;
        /** The walk's sum of log-sigmoid triple scores: the log-probability that all its triples are relevant. */
        public double score;
        public String answer;
        /** [head, relation, tail] of each step, from the topic entity outwards (a step may go against a triple). */
        public List<List<String>> triplets;
        public List<Double> tripletScores;
        /** 1-based rank of the relation chain the walk follows (rankBy 'chain'); 1 for every walk otherwise. */
        public long chainRank;
        /** The chain's steps, each 'relation>' (head to tail) or 'relation<' (tail to head). */
        public List<String> chain;
        /** The chain's score (sum over steps of log mean sigmoid); the walk's own score with rankBy 'walk'. */
        public double chainScore;

        public WalkRow(long rank, double score, String answer, List<List<String>> triplets, List<Double> tripletScores,
                       long chainRank, List<String> chain, double chainScore) {
            this.rank = rank;
            this.score = score;
            this.answer = answer;
            this.triplets = triplets;
            this.tripletScores = tripletScores;
            this.chainRank = chainRank;
            this.chain = chain;
            this.chainScore = chainScore;
        }
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
        String rankBy = options.string("rankBy", "chain");
        if (!WALK_RANKINGS.contains(rankBy)) {
            throw new BadArgumentException("config.rankBy must be 'chain' or 'walk', got '" + rankBy + "'");
        }
        Scored scored = scoreQuestion(question, options);
        if (scored == null) {
            return Stream.empty();
        }
        CandidateSubgraph subgraph = scored.subgraph();
        List<WalkRow> rows = new ArrayList<>();
        if (rankBy.equals("walk")) {
            for (PathSelection.Walk walk : PathSelection.walksWithin(subgraph.heads, subgraph.tails, scored.scores(),
                    subgraph.topic, scored.pathHops(), scored.k())) {
                rows.add(walkRow(subgraph, scored, rows.size() + 1, walk, 1, List.of(), walk.score()));
            }
            return rows.stream();
        }
        List<String> types = new ArrayList<>();
        Map<String, Integer> typeIds = new HashMap<>();
        int[] relations = new int[subgraph.size()];
        for (int t = 0; t < relations.length; t++) {
            String type = subgraph.relationships.get(t).getType().name();
            relations[t] = typeIds.computeIfAbsent(type, name -> {
                types.add(name);
                return types.size() - 1;
            });
        }
        List<ChainSelection.Chain> chains = ChainSelection.rank(subgraph.heads, subgraph.tails, relations,
                scored.scores(), subgraph.topic, scored.pathHops());
        for (ChainSelection.Ranked ranked : ChainSelection.walksWithin(chains, scored.k())) {
            ChainSelection.Chain chain = chains.get(ranked.chain());
            List<String> steps = new ArrayList<>(chain.relations().length);
            for (int i = 0; i < chain.relations().length; i++) {
                steps.add(types.get(chain.relations()[i]) + (chain.forward()[i] ? ">" : "<"));
            }
            rows.add(walkRow(subgraph, scored, rows.size() + 1, ranked.walk(), ranked.chain() + 1, steps,
                    chain.score()));
        }
        return rows.stream();
    }

    private static WalkRow walkRow(CandidateSubgraph subgraph, Scored scored, long rank, PathSelection.Walk walk,
                                   long chainRank, List<String> chain, double chainScore) {
        List<List<String>> triplets = new ArrayList<>(walk.triples().length);
        List<Double> tripletScores = new ArrayList<>(walk.triples().length);
        for (int t : walk.triples()) {
            triplets.add(List.of(nameOf(subgraph.nodes.get(subgraph.heads[t])),
                    subgraph.relationships.get(t).getType().name(), nameOf(subgraph.nodes.get(subgraph.tails[t]))));
            tripletScores.add((double) scored.scores()[t]);
        }
        return new WalkRow(rank, walk.score(), nameOf(subgraph.nodes.get(walk.end())), triplets, tripletScores,
                chainRank, chain, chainScore);
    }

    /** A question's candidates and their scores, with the k and walk length the call asked for. */
    private record Scored(CandidateSubgraph subgraph, float[] scores, int k, int pathHops) {
    }

    /** Links, embeds, collects and scores for retrieve and walks; null when there is no candidate. */
    private Scored scoreQuestion(String question, Options options) {
        int k = options.integer("k", DEFAULT_K, 1, Integer.MAX_VALUE);
        String modelName = options.string("model", null);
        List<String> topicTexts = options.strings("topicEntities");
        if (question == null) {
            throw new BadArgumentException("question must be a string, got null");
        }
        TextLimits.question(question, "question");
        String kgName = KnowledgeGraphs.fromConfig(tx, options);
        ModelsDir.Ref ref = ModelsDir.Ref.of("subgraphrag", "SubgraphRAG model", modelName, kgName);

        Onnx.requireRuntime();
        try (ModelCache.Lease<ScorerModel> lease = ScorerModel.acquire(ref)) {
            ScorerModel model = lease.get();
            KnowledgeGraphs.requireSameEncoder(tx, kgName, model.encoder, ref.label(), "`" + ref.command() + "`");
            int hops = options.integer("hops", model.hops != null ? model.hops : DEFAULT_HOPS, 1, MAX_HOPS);
            int maxCandidates = options.integer("maxCandidates",
                    model.maxCandidates != null ? model.maxCandidates : DEFAULT_MAX_CANDIDATES, 1, LIMIT_MAX_CANDIDATES);
            boolean includeSeed = options.bool("includeSeed", model.includeSeed);
            if (model.featureDim(includeSeed) != model.inputDim) {
                throw new BadArgumentException("config.includeSeed: " + ref.label() + " was trained with"
                        + " include_seed " + model.includeSeed + " (input_dim " + model.inputDim + "); includeSeed "
                        + includeSeed + " would give " + model.featureDim(includeSeed) + " features");
            }
            boolean failOnTruncation = options.bool("failOnTruncation", false);
            boolean cacheEmbeddings = options.bool("cacheEmbeddings", true);
            int pathHops = options.integer("pathHops", hops, 1, hops);

            float[] questionVector = options.vector("questionEmbedding", model.embeddingDim);
            if (questionVector == null && question.isBlank()) {
                throw new BadArgumentException("question must not be empty (or pass config.questionEmbedding"
                        + " and config.topicEntities)");
            }

            Topics topics = linkTopics(question, topicTexts, kgName);
            if (questionVector == null) {
                List<String> spans = options.strings("topicSpans");
                String text = model.questionMask == null ? QuestionText.withoutBrackets(question)
                        : QuestionText.maskTopic(question, spans != null ? spans : topics.spans(), model.questionMask);
                questionVector = TextFunctions.embedText(text, model.encoder);
                if (questionVector.length != model.embeddingDim) {
                    throw new IllegalStateException("text encoder '" + model.encoder + "' gives " + questionVector.length
                            + " numbers but " + ref.label() + " expects embedding_dim " + model.embeddingDim);
                }
            }

            CandidateSubgraph subgraph = collect(kgName, topics.nodes(), hops, maxCandidates, failOnTruncation);
            if (subgraph.size() == 0) {
                return null;
            }
            float[] scores = score(model, subgraph, questionVector, includeSeed, kgName, cacheEmbeddings);
            return new Scored(subgraph, scores, k, pathHops);
        }
    }

    @Procedure(name = "kgqa.subgraphrag.cosine", mode = Mode.READ)
    @Description("kgqa.subgraphrag.cosine(kg :: STRING, topicIds :: LIST<STRING>, config :: MAP) :: (head,"
            + " relation, tail, score, rank) - the untrained baseline of SubgraphRAG retrieval: the same candidate"
            + " triples as kgqa.subgraphrag.candidates, each scored cos(q, head) + cos(q, relation) + cos(q, tail)"
            + " from the stored embeddings (a missing embedding adds 0), and the top k streamed, highest score"
            + " first (rank 1 = best; ties keep breadth-first order). config: questionEmbedding (required, the"
            + " question's vector, as long as the KG's embeddings); k (default 100, > 0); hops (default 2);"
            + " maxCandidates (default 20000) and failOnTruncation (default false) as for candidates;"
            + " cacheEmbeddings (default true) as for retrieve.")
    public Stream<ScoredTriple> cosine(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", COSINE_KEYS);
        int k = options.integer("k", DEFAULT_K, 1, Integer.MAX_VALUE);
        int hops = options.integer("hops", DEFAULT_HOPS, 1, MAX_HOPS);
        int maxCandidates = options.integer("maxCandidates", DEFAULT_MAX_CANDIDATES, 1, LIMIT_MAX_CANDIDATES);
        boolean failOnTruncation = options.bool("failOnTruncation", false);
        boolean cacheEmbeddings = options.bool("cacheEmbeddings", true);
        float[] question = options.vector("questionEmbedding");
        if (question == null) {
            throw new BadArgumentException("config.questionEmbedding is required: the question's vector");
        }
        String kgName = KnowledgeGraphs.require(tx, kg, "kg");
        List<Node> topics = TopicEntities.byIds(tx, kgName, topicIds);

        CandidateSubgraph subgraph = collect(kgName, topics, hops, maxCandidates, failOnTruncation);
        if (subgraph.size() == 0) {
            return Stream.empty();
        }
        int dim = question.length;
        // The caller's vector, not the KG, is what is wrong when their lengths differ.
        Function<String, RuntimeException> mismatch = fact -> new BadArgumentException(
                "config.questionEmbedding has " + dim + " numbers, but " + fact);
        // Each entity and relation is compared with the question once, however many triples it is in.
        float[][] vectors = entityVectors(subgraph, dim, kgName, mismatch, cacheEmbeddings);
        double[] nodeSimilarity = new double[vectors.length];
        for (int v = 0; v < vectors.length; v++) {
            nodeSimilarity[v] = Vectors.cosine(question, vectors[v]);
        }
        Map<String, Double> relationSimilarity = new HashMap<>();
        float[] scores = new float[subgraph.size()];
        for (int i = 0; i < scores.length; i++) {
            String type = subgraph.relationships.get(i).getType().name();
            double relation = relationSimilarity.computeIfAbsent(type,
                    t -> Vectors.cosine(question, relationEmbedding(kgName, t, dim, mismatch)));
            scores[i] = (float) (nodeSimilarity[subgraph.heads[i]] + relation + nodeSimilarity[subgraph.tails[i]]);
        }
        return topK(subgraph, scores, k).stream();
    }

    // ------------------------------------------------------------------------------------------ pieces

    private CandidateSubgraph collect(String kg, List<Node> topics, int hops, int maxCandidates, boolean failOnTruncation) {
        CandidateSubgraph subgraph = CandidateSubgraph.collect(kg, topics, hops, maxCandidates);
        if (subgraph.truncated) {
            String message = "more than " + maxCandidates + " candidate triples within " + hops + " hops of "
                    + topics.size() + " topic entities in KG '" + kg + "'";
            if (failOnTruncation) {
                throw new BadArgumentException("config.maxCandidates: " + message
                        + "; raise maxCandidates or lower hops");
            }
            if (log != null) {
                log.warn("kgqa.subgraphrag: " + message + "; kept the first " + maxCandidates
                        + " in breadth-first order (config.maxCandidates)");
            }
        }
        return subgraph;
    }

    /** The topic entities of a question, and the words that named them (what masking replaces). */
    private record Topics(List<Node> nodes, List<String> spans) {
    }

    private Topics linkTopics(String question, List<String> topicTexts, String kg) {
        EntityLinker linker = new EntityLinker(tx, kg, log);
        if (topicTexts != null) {
            if (topicTexts.isEmpty()) {
                throw new BadArgumentException("config.topicEntities must not be empty (omit it to link the question)");
            }
            return new Topics(linker.resolveExplicit(topicTexts, "config.topicEntities"), topicTexts);
        }
        // the same entities kgqa.link.entities streams for this question
        List<EntityLinker.Link> linked = linker.link(question, LINKED_TOPICS);
        if (linked.isEmpty()) {
            throw new BadArgumentException("question: no topic entity of KG '" + kg + "' found in '" + question
                    + "'; mark it with [brackets] or pass config.topicEntities");
        }
        return new Topics(linked.stream().map(EntityLinker.Link::node).toList(),
                linked.stream().map(EntityLinker.Link::span).toList());
    }

    private float[] score(ScorerModel model, CandidateSubgraph subgraph, float[] question, boolean includeSeed,
                          String kg, boolean cacheEmbeddings) {
        int dim = model.embeddingDim;
        int nodeCount = subgraph.nodes.size();
        Function<String, RuntimeException> mismatch = fact -> new IllegalStateException(
                fact + "; model '" + model.name + "' expects " + dim);
        float[][] entityVectors = entityVectors(subgraph, dim, kg, mismatch, cacheEmbeddings);

        Map<String, float[]> relationVectors = new HashMap<>();
        String[] types = new String[subgraph.size()];
        for (int i = 0; i < types.length; i++) {
            types[i] = subgraph.relationships.get(i).getType().name();
            relationVectors.computeIfAbsent(types[i], type -> relationEmbedding(kg, type, dim, mismatch));
        }

        double[][] codes = subgraph.entityCodes(model.forwardRounds, model.reverseRounds, includeSeed);
        // every type, also those without a stored embedding (computeIfAbsent keeps no null)
        List<String> relationTypes = new ArrayList<>(new java.util.LinkedHashSet<>(Arrays.asList(types)));
        Map<String, Integer> relationRow = new HashMap<>();
        float[][] relationMatrix = new float[relationTypes.size()][];
        for (int r = 0; r < relationTypes.size(); r++) {
            relationRow.put(relationTypes.get(r), r);
            relationMatrix[r] = relationVectors.get(relationTypes.get(r));
        }
        int[] relations = new int[types.length];
        for (int i = 0; i < types.length; i++) {
            relations[i] = relationRow.get(types[i]);
        }
        PathCodes.Code[] paths = model.pathSteps > 0
                ? PathCodes.compute(nodeCount, subgraph.heads, relations, subgraph.tails, subgraph.topic,
                        model.pathSteps, relationMatrix.length)
                : null;
        float[][] entityCodes = new float[nodeCount][];
        for (int v = 0; v < nodeCount; v++) {
            entityCodes[v] = new float[codes[v].length];
            for (int j = 0; j < codes[v].length; j++) {
                entityCodes[v][j] = (float) codes[v][j];
            }
        }
        // An entity's code as the model reads it: DDE, then its path code's relation mixtures, expanded as
        // each row is written (materialised, they would take 1,536 floats per entity).
        ScorerModel.EntityWriter writeCode = (v, out) -> {
            out.put(entityCodes[v]);
            if (paths != null) {
                out.put(PathCodes.expand(paths[v], model.pathSteps, relationMatrix, dim));
            }
        };
        float[] zeros = new float[dim];
        if (model.hasParts()) {
            float[][] relationRows = new float[relationMatrix.length][];
            for (int r = 0; r < relationRows.length; r++) {
                relationRows[r] = relationMatrix[r] != null ? relationMatrix[r] : zeros;
            }
            return model.scoreByParts(nodeCount, subgraph.heads, subgraph.tails, relations, (v, out) -> {
                out.put(entityVectors[v] != null ? entityVectors[v] : zeros);
                writeCode.write(v, out);
            }, relationRows, question);
        }
        return model.score(subgraph.size(), (i, out) -> {
            int h = subgraph.heads[i];
            int t = subgraph.tails[i];
            float[] relation = relationVectors.get(types[i]);
            out.put(question);
            out.put(entityVectors[h] != null ? entityVectors[h] : zeros);
            out.put(relation != null ? relation : zeros);
            out.put(entityVectors[t] != null ? entityVectors[t] : zeros);
            writeCode.write(h, out);
            writeCode.write(t, out);
            if (model.questionRelation) {
                for (int j = 0; j < dim; j++) {
                    out.put(relation != null ? question[j] * relation[j] : 0f);
                }
            }
        });
    }

    /**
     * The stored embedding of every node of the subgraph (null when a node has none, which is logged).
     *
     * @param mismatch the error when an embedding is not {@code dim} long, from the fact ("entity 'x' of KG
     *     'k' has a 384-d embedding"): whatever fixed {@code dim} decides whose fault that is
     */
    private float[][] entityVectors(CandidateSubgraph subgraph, int dim, String kg,
                                    Function<String, RuntimeException> mismatch, boolean cacheEmbeddings) {
        int nodeCount = subgraph.nodes.size();
        float[][] vectors = new float[nodeCount][];
        int missing = 0;
        EmbeddingCache.Reader embeddings = cacheEmbeddings
                ? EmbeddingCache.shared().reader(tx, kg) : EmbeddingCache.shared().uncached();
        for (int v = 0; v < nodeCount; v++) {
            float[] vector = embeddings.vector(subgraph.nodes.get(v));
            if (vector == null) {
                missing++;
            } else if (vector.length != dim) {
                throw mismatch.apply("entity '" + subgraph.nodes.get(v).getProperty("id", "?") + "' of KG '" + kg
                        + "' has a " + vector.length + "-d embedding");
            }
            vectors[v] = vector;
        }
        if (missing > 0 && log != null) {
            log.warn("kgqa.subgraphrag: " + missing + " of " + nodeCount + " candidate entities of KG '" + kg
                    + "' have no embedding; zeros used");
        }
        return vectors;
    }

    /** The stored embedding of relation {@code type} in {@code kg}; null (zeros) when absent. */
    private float[] relationEmbedding(String kg, String type, int dim, Function<String, RuntimeException> mismatch) {
        try (ResourceIterator<Node> it = tx.findNodes(RELATION, "kg", kg, "name", type)) {
            if (!it.hasNext()) {
                return null;
            }
            float[] vector = Vectors.toFloats(it.next().getProperty("embedding", null));
            if (vector != null && vector.length != dim) {
                throw mismatch.apply("relation '" + type + "' of KG '" + kg + "' has a " + vector.length
                        + "-d embedding");
            }
            return vector;
        }
    }

    /** The k best rows, highest score first; ties (and NaN, which sorts last) keep BFS order. */
    private static List<ScoredTriple> topK(CandidateSubgraph subgraph, float[] scores, int k) {
        return rows(subgraph, scores, PathSelection.byScore(scores), k);
    }

    /** The first k triples of {@code order} as rows, rank 1 first. */
    private static List<ScoredTriple> rows(CandidateSubgraph subgraph, float[] scores, Integer[] order, int k) {
        int count = Math.min(k, order.length);
        List<ScoredTriple> rows = new ArrayList<>(count);
        for (int r = 0; r < count; r++) {
            int i = order[r];
            Node head = subgraph.nodes.get(subgraph.heads[i]);
            Node tail = subgraph.nodes.get(subgraph.tails[i]);
            rows.add(new ScoredTriple(nameOf(head), subgraph.relationships.get(i).getType().name(), nameOf(tail),
                    scores[i], r + 1));
        }
        return rows;
    }

    private static String nameOf(Node node) {
        Object name = node.getProperty("name", null);
        return name != null ? String.valueOf(name) : String.valueOf(node.getProperty("id", ""));
    }
}
