package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.linking.TopicEntities;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Entities;
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

/**
 * A question's offline pattern in one KG: its topic entities (from {@link TopicEntities}, the resolver every
 * road uses) and the numbers in it that name entities, then {@link OfflinePatternBuilder}. The relation
 * vocabulary of a KG is embedded once per load and kept in a deliberate, thread-safe cache keyed by the KG's
 * name and load time.
 */
public final class QuestionPatterns {

    private static final Label RELATION = Label.label("Relation");
    private static final Label ENTITY = Label.label("Entity");
    private static final java.util.regex.Pattern NUMBER = java.util.regex.Pattern.compile("(?<![\\p{L}\\p{N}.])\\d+(?:\\.\\d+)?(?![\\p{L}\\p{N}])");
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

    /**
     * @param topics the question's entities ({@link TopicEntities#resolve}), each with the words that name it
     * @param literals whether numbers of the question that name entities become known nodes too: off when the
     *     caller named the entities without their words, since then which numbers they cover is unknown
     * @param bridge add a hop when an entity has no relationship of its first relation (off for claims, whose
     *     relation must hold of the entity itself)
     */
    public static QuestionPattern build(Transaction tx, String kg, String question, List<TopicEntities.Topic> topics,
                                        boolean literals, boolean bridge) {
        List<OfflinePatternBuilder.Entity> entities = new ArrayList<>();
        Map<String, List<Node>> pins = new HashMap<>();
        Map<String, String> ids = new LinkedHashMap<>();
        addTopics(topics, entities, pins, ids);
        if (literals) {
            addLiterals(tx, kg, question, entities, pins, ids);
        }
        RelationMentions vocabulary = vocabulary(tx, kg);
        OfflinePatternBuilder.Built built = new OfflinePatternBuilder(vocabulary).build(question, entities,
                (i, relation) -> !bridge || pins.get(entities.get(i).node()).stream().anyMatch(n -> has(n, relation)));
        return new QuestionPattern(built, pins, ids);
    }

    private static boolean has(Node node, String relation) {
        try (var relationships = node.getRelationships(org.neo4j.graphdb.Direction.BOTH,
                org.neo4j.graphdb.RelationshipType.withName(relation))) {
            return relationships.iterator().hasNext();
        }
    }

    /** Entities linked from the same words (a person and the tag named after them) become one pattern node. */
    private static void addTopics(List<TopicEntities.Topic> topics, List<OfflinePatternBuilder.Entity> entities,
                                  Map<String, List<Node>> pins, Map<String, String> ids) {
        Map<String, Integer> bySpan = new HashMap<>();
        for (TopicEntities.Topic topic : topics) {
            String span = topic.span().strip().toLowerCase(java.util.Locale.ROOT);
            Integer at = bySpan.get(span);
            if (at != null) {
                String node = entities.get(at).node();
                List<Node> alternatives = new ArrayList<>(pins.get(node));
                alternatives.add(topic.node());
                pins.put(node, alternatives);
                continue;
            }
            bySpan.put(span, entities.size());
            add(entities, pins, ids, topic.node(), topic.span());
        }
    }

    private static void add(List<OfflinePatternBuilder.Entity> entities, Map<String, List<Node>> pins,
                            Map<String, String> ids, Node node, String span) {
        String name = Entities.name(node);
        // an entity whose name reads as a variable (the film "Unknown") is quoted, so that it stays known
        String base = PatternGraph.isVariable(name) ? "'" + name + "'" : name;
        String text = base;
        for (int n = 2; pins.containsKey(text); n++) {
            text = base + " (" + n + ")";
        }
        pins.put(text, List.of(node));
        ids.put(text, String.valueOf(node.getProperty("id", "")));
        entities.add(new OfflinePatternBuilder.Entity(text, span == null ? name : span));
    }

    /**
     * Numbers in the question that are entities of the KG (a release year, a rating) become known nodes too:
     * the linker leaves numbers alone, but a pattern needs them ("Tom Hanks films from 1994").
     */
    private static void addLiterals(Transaction tx, String kg, String question,
                                    List<OfflinePatternBuilder.Entity> entities, Map<String, List<Node>> pins,
                                    Map<String, String> ids) {
        java.util.regex.Matcher m = NUMBER.matcher(question);
        while (m.find()) {
            String number = m.group();
            boolean covered = entities.stream().anyMatch(e -> PatternTokens.words(e.span()).contains(number));
            if (covered || pins.containsKey(number)) {
                continue;
            }
            try (ResourceIterator<Node> found = tx.findNodes(ENTITY, "kg", kg, "name", number)) {
                if (found.hasNext()) {
                    add(entities, pins, ids, found.next(), number);
                }
            }
        }
    }

    /** Relation name -> the text its pattern edges carry, for {@code kg}. */
    static Function<String, String> relationTexts(Transaction tx, String kg) {
        Map<String, String> texts = new HashMap<>();
        for (RelationMentions.Relation r : vocabulary(tx, kg).relations()) {
            texts.put(r.name(), r.text());
        }
        return texts::get;
    }

    static RelationMentions vocabulary(Transaction tx, String kg) {
        Node kgNode = tx.findNode(KnowledgeGraphs.KG, "name", kg);
        java.nio.file.Path phrasesFile = RelationPhrases.file(kg);
        String key = kg + "\u0000" + (kgNode == null ? "" : Objects.toString(kgNode.getProperty("loaded_at", "")))
                + "\u0000" + RelationPhrases.stamp(phrasesFile);
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
            throw new BadArgumentException("KG '" + kg + "' has no :Relation nodes; reload it with `kgqa load`");
        }
        RelationMentions built = new RelationMentions(texts, RelationPhrases.read(phrasesFile),
                embedder(KnowledgeGraphs.embeddingModel(tx, kg, io.kgqa.procedures.text.TextEncoder.DEFAULT_NAME)));
        VOCABULARIES.keySet().removeIf(k -> k.startsWith(kg + "\u0000"));
        VOCABULARIES.put(key, built);
        return built;
    }

    /** Words and relation texts embedded by {@code encoder} (the KG's), cached per encoder and text. */
    static Function<String, float[]> embedder(String encoder) {
        return text -> {
            String key = encoder + "\u0000" + text;
            float[] v = WORDS.get(key);
            if (v == null) {
                v = io.kgqa.procedures.text.TextFunctions.embedText(text, encoder);
                WORDS.put(key, v);
            }
            return v;
        };
    }
}
