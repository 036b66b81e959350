package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.linking.EntityLinker;
import io.kgqa.procedures.util.KnowledgeGraphs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * A question's offline pattern in one KG: its entities linked by {@link EntityLinker} (the linker every road
 * uses), then {@link OfflinePatternBuilder}. The relation vocabulary of a KG is embedded once per load and kept
 * in a deliberate, thread-safe cache keyed by the KG's name and load time.
 */
public final class QuestionPatterns {

    /** The entities a question links to by default (as kgqa.link.entities gives them). */
    public static final int LINKED_ENTITIES = 3;

    private static final Label RELATION = Label.label("Relation");
    private static final Map<String, RelationMentions> VOCABULARIES = new ConcurrentHashMap<>();
    private static final int WORD_CACHE = 20_000;
    private static final Map<String, float[]> WORDS = java.util.Collections.synchronizedMap(
            new LinkedHashMap<>(1024, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, float[]> eldest) {
                    return size() > WORD_CACHE;
                }
            });

    /** A pattern and the entities its known nodes stand for. */
    public record QuestionPattern(OfflinePatternBuilder.Built built, Map<String, List<Node>> pins,
                                  Map<String, String> entityIds) {
    }

    private QuestionPatterns() {
    }

    public static QuestionPattern build(Transaction tx, String kg, String question, List<String> topicEntities,
                                        Log log) {
        if (question == null || question.isBlank()) {
            throw new IllegalArgumentException("question must not be empty");
        }
        EntityLinker linker = new EntityLinker(tx, kg, log);
        List<OfflinePatternBuilder.Entity> entities = new ArrayList<>();
        Map<String, List<Node>> pins = new HashMap<>();
        Map<String, String> ids = new LinkedHashMap<>();
        if (topicEntities != null) {
            if (topicEntities.isEmpty()) {
                throw new IllegalArgumentException("config.topicEntities must not be empty (omit it to link the question)");
            }
            List<Node> nodes = linker.resolveExplicit(topicEntities, "config.topicEntities");
            for (int i = 0; i < nodes.size(); i++) {
                add(entities, pins, ids, nodes.get(i), topicEntities.get(i));
            }
        } else {
            for (EntityLinker.Link link : linker.link(question, LINKED_ENTITIES)) {
                add(entities, pins, ids, link.node(), link.span());
            }
        }
        RelationMentions vocabulary = vocabulary(tx, kg);
        OfflinePatternBuilder.Built built = new OfflinePatternBuilder(vocabulary).build(question, entities);
        return new QuestionPattern(built, pins, ids);
    }

    private static void add(List<OfflinePatternBuilder.Entity> entities, Map<String, List<Node>> pins,
                            Map<String, String> ids, Node node, String span) {
        String name = String.valueOf(node.getProperty("name", node.getProperty("id", "")));
        String text = name;
        for (int n = 2; pins.containsKey(text) || PatternGraph.isVariable(text); n++) {
            text = name + " (" + n + ")";
        }
        pins.put(text, List.of(node));
        ids.put(text, String.valueOf(node.getProperty("id", "")));
        entities.add(new OfflinePatternBuilder.Entity(text, span == null ? name : span));
    }

    static RelationMentions vocabulary(Transaction tx, String kg) {
        Node kgNode = tx.findNode(KnowledgeGraphs.KG, "name", kg);
        String key = kg + "\u0000" + (kgNode == null ? "" : Objects.toString(kgNode.getProperty("loaded_at", "")));
        RelationMentions cached = VOCABULARIES.get(key);
        if (cached != null) {
            return cached;
        }
        Map<String, String> texts = new LinkedHashMap<>();
        try (ResourceIterator<Node> relations = tx.findNodes(RELATION, "kg", kg)) {
            while (relations.hasNext()) {
                Node r = relations.next();
                String name = String.valueOf(r.getProperty("name"));
                texts.put(name, String.valueOf(r.getProperty("text", name.replace('_', ' ').replace('.', ' '))));
            }
        }
        if (texts.isEmpty()) {
            throw new IllegalArgumentException("KG '" + kg + "' has no :Relation nodes; reload it with `kgqa load`");
        }
        RelationMentions built = new RelationMentions(texts, embedder());
        VOCABULARIES.keySet().removeIf(k -> k.startsWith(kg + "\u0000"));
        VOCABULARIES.put(key, built);
        return built;
    }

    static Function<String, float[]> embedder() {
        return text -> {
            float[] v = WORDS.get(text);
            if (v == null) {
                v = io.kgqa.procedures.text.TextFunctions.embedText(text,
                        io.kgqa.procedures.text.TextEncoder.DEFAULT_NAME);
                WORDS.put(text, v);
            }
            return v;
        };
    }
}
