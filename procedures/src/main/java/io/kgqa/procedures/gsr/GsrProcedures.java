package io.kgqa.procedures.gsr;

import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Entities;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The {@code kgqa.gsr.*} namespace: GSR's subgraph retrieval as generation. A small trained model
 * ({@link ChainModel}, ONNX Runtime) writes relation chains for the question with its topic entity masked;
 * {@link ChainWalker} walks them from the topic entities.
 */
public class GsrProcedures {

    public static final int DEFAULT_BEAMS = 10;
    public static final int MAX_BEAMS = 100;
    /** Chains that reach something, as GSR keeps. */
    public static final int DEFAULT_KEEP = 3;
    /** The most paths per chain a caller may ask for (config.maxPaths; the default is Limits.ROW_CAP). */
    public static final int LIMIT_MAX_PATHS = 10_000_000;

    private static final Set<String> CHAIN_KEYS = Set.of("kg", "model", "beams", "topicEntities", "topicSpans");
    private static final Set<String> RETRIEVE_KEYS = Set.of("kg", "model", "beams", "topicEntities", "topicSpans",
            "keep", "maxPaths", "allChains");

    @Context
    public Transaction tx;

    @Context
    public Log log;

    /** One row of {@code kgqa.gsr.chains}. */
    public static class ChainRow {
        public long rank;
        /** [[relation, "out" | "in"], …]: "out" walks along the KG's direction, "in" against it. */
        public List<List<String>> chain;
        /** the chain's log-probability */
        public double score;
        /** what the model read */
        public String maskedQuestion;

        ChainRow(long rank, Chain chain, String maskedQuestion) {
            this.rank = rank;
            this.chain = chain.asLists();
            this.score = chain.score();
            this.maskedQuestion = maskedQuestion;
        }
    }

    /** One row of {@code kgqa.gsr.retrieve}: one walked path. */
    public static class PathRow {
        /** 1-based rank of the chain among the generated ones */
        public long chainRank;
        public List<List<String>> chain;
        public double score;
        public String topicId;
        public String topic;
        public String answerId;
        public String answer;
        /** the path as [head, relation, tail] in the KG's own direction */
        public List<List<String>> triplets;
        /** true when config.maxPaths cut this chain's paths */
        public boolean truncated;
        /** what the model read */
        public String maskedQuestion;

        PathRow(long chainRank, Chain chain, ChainWalker.Path path, boolean truncated, String maskedQuestion) {
            this.chainRank = chainRank;
            this.chain = chain.asLists();
            this.score = chain.score();
            this.triplets = new ArrayList<>();
            this.truncated = truncated;
            this.maskedQuestion = maskedQuestion;
            if (path == null) {
                return; // config.allChains: a chain that reached nothing or was not walked
            }
            this.topicId = String.valueOf(path.topic().getProperty("id", ""));
            this.topic = Entities.name(path.topic());
            this.answerId = String.valueOf(path.end().getProperty("id", ""));
            this.answer = Entities.name(path.end());
            for (Relationship r : path.relationships()) {
                triplets.add(List.of(Entities.name(r.getStartNode()), r.getType().name(),
                        Entities.name(r.getEndNode())));
            }
        }
    }

    @Procedure(name = "kgqa.gsr.chains", mode = Mode.READ)
    @Description("kgqa.gsr.chains(question :: STRING, config = {} :: MAP) :: (rank, chain, score, maskedQuestion)"
            + " - GSR's relation chains for a question, best first: the topic entity's words are replaced by [MASK]"
            + " (a [bracketed] name, else config.topicSpans, else the words kgqa.link.entities links; a question in"
            + " which no entity is found is refused) and a trained"
            + " encoder-decoder (ONNX Runtime) writes chains of relation tokens by beam search. chain is a list of"
            + " [relation, direction], direction 'out' along the KG's triples or 'in' against them; score is the"
            + " chain's log-probability. config: kg (default: the only or latest KG; its model and its entities), model"
            + " (default: the KG's own, written by `kgqa train all --kg KG`; a name: <models>/gsr/<model>), beams (default 10, at most"
            + " 100), topicEntities (names or ids instead of linking), topicSpans (the words to mask).")
    public Stream<ChainRow> chains(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        requireQuestion(question);
        Options options = new Options(config, "config", CHAIN_KEYS);
        int beams = options.integer("beams", DEFAULT_BEAMS, 1, MAX_BEAMS);
        String modelName = options.string("model", null);
        List<String> spans = options.strings("topicSpans");
        options.strings("topicEntities"); // checked here too: a bracket or topicSpans means it is not read below
        String kg = KnowledgeGraphs.fromConfig(tx, options); // whose model, and where to link
        if (spans == null && !hasBracket(question)) {
            spans = topics(question, options, kg).spans();
        }
        String masked = QuestionMasking.masked(question, spans == null ? List.of() : spans);
        Onnx.requireRuntime();
        List<Chain> chains;
        try (ModelCache.Lease<ChainModel> model = ChainModel.acquire(ModelsDir.Ref.of("gsr", "GSR model", modelName, kg))) {
            chains = model.get().chains(masked, beams);
        }
        List<ChainRow> rows = new ArrayList<>(chains.size());
        for (int i = 0; i < chains.size(); i++) {
            rows.add(new ChainRow(i + 1, chains.get(i), masked));
        }
        return rows.stream();
    }

    @Procedure(name = "kgqa.gsr.retrieve", mode = Mode.READ)
    @Description("kgqa.gsr.retrieve(question :: STRING, config = {} :: MAP) :: (chainRank, chain, score, topicId,"
            + " topic, answerId, answer, triplets, truncated, maskedQuestion) - GSR retrieval: the chains of kgqa.gsr.chains, best"
            + " first, are walked from the topic entities (each step along or against its relationship type, a"
            + " relationship at most once per path, never back to the topic entity); chains that reach nothing are"
            + " dropped and the first config.keep (default 3) that reach something stream one row per path, with"
            + " the path's triplets [head, relation, tail] in the KG's own direction. A question in which no"
            + " entity is found is refused in one line, as every kgqa retriever refuses it. config: kg, model,"
            + " beams (default 10), topicEntities, topicSpans as for kgqa.gsr.chains; keep (default 3); maxPaths"
            + " (default " + Limits.ROW_CAP + " paths per chain); allChains (default"
            + " false; true: every other generated chain too, as one row with no answer and no triplets, so that a"
            + " caller sees what the model proposed).")
    public Stream<PathRow> retrieve(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        requireQuestion(question);
        Options options = new Options(config, "config", RETRIEVE_KEYS);
        int beams = options.integer("beams", DEFAULT_BEAMS, 1, MAX_BEAMS);
        int keep = options.integer("keep", DEFAULT_KEEP, 1, MAX_BEAMS);
        ChainWalker walker = new ChainWalker(options.integer("maxPaths", Limits.ROW_CAP, 1, LIMIT_MAX_PATHS));
        String modelName = options.string("model", null);
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        Onnx.requireRuntime();
        try (ModelCache.Lease<ChainModel> model = ChainModel.acquire(ModelsDir.Ref.of("gsr", "GSR model", modelName, kg))) {
            TopicEntities.Topics topics = topics(question, options, kg);
            String masked = QuestionMasking.masked(question, topics.spans());
            List<PathRow> rows = new ArrayList<>();
            int kept = 0;
            boolean allChains = options.bool("allChains", false);
            List<Chain> chains = model.get().chains(masked, beams);
            for (int i = 0; i < chains.size(); i++) {
                List<ChainWalker.Path> paths = kept < keep ? walker.walk(topics.nodes(), chains.get(i)) : List.of();
                if (paths.isEmpty()) {
                    if (allChains) {
                        rows.add(new PathRow(i + 1, chains.get(i), null, false, masked));
                    }
                    continue;
                }
                kept++;
                boolean truncated = walker.truncated(paths);
                for (ChainWalker.Path path : paths) {
                    rows.add(new PathRow(i + 1, chains.get(i), path, truncated, masked));
                }
            }
            return rows.stream();
        }
    }

    private TopicEntities.Topics topics(String question, Options options, String kg) {
        return TopicEntities.resolve(tx, kg, log, question, options.strings("topicEntities"),
                options.strings("topicSpans"));
    }

    private static void requireQuestion(String question) {
        TextLimits.question(question, "question");
        if (question == null || question.isBlank()) {
            throw new BadArgumentException("question must be a non-empty string, got "
                    + (question == null ? "null" : "'" + question + "'"));
        }
    }

    private static boolean hasBracket(String question) {
        int open = question.indexOf('[');
        return open >= 0 && question.indexOf(']', open + 1) > open + 1;
    }
}
