package io.kgqa.procedures.subgraphrag;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;

/**
 * Finds the topic entities of a question inside the database, scoped to one KG.
 *
 * <ul>
 *   <li>Explicit names or ids ({@code config.topicEntities}, or the text of {@code [brackets]} in the
 *       question): exact id, then exact name (range index on {@code (kg, id)} / {@code (kg, name)}),
 *       then a name equal up to case, accents and punctuation (full-text index {@code entity_name}).
 *       Not found is an error naming the text.</li>
 *   <li>Free text: every n-gram span of the question (up to {@value #MAX_SPAN_TOKENS} tokens, not made
 *       only of question words, stop words or the KG's relation words) is looked up as a full-text
 *       phrase; a span links when an entity's normalised name equals it. Longer spans win and linked
 *       spans do not overlap. With no exact span, the best full-text hit of the content words is used.</li>
 * </ul>
 */
final class EntityLinker {

    static final int MAX_SPAN_TOKENS = 8;
    /** Entities kept per linked text: several entities may share one name (e.g. Freebase). */
    static final int MAX_PER_NAME = 5;
    private static final int FULLTEXT_LIMIT = 50;
    /** Hits read for the OR of all span phrases of a free-text question. */
    private static final int SPAN_QUERY_LIMIT = 200;
    private static final Pattern BRACKETS = Pattern.compile("\\[([^\\[\\]]+)]");
    private static final Pattern BRACKET_CHARS = Pattern.compile("[\\[\\]]");
    private static final Pattern SPACES = Pattern.compile("\\s+", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Pattern NOT_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");
    private static final Pattern MARKS = Pattern.compile("\\p{M}+");
    /** A word as Lucene's standard analyzer keeps it: letters/digits, inner apostrophes allowed ("schindler's"). */
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}\\p{M}]+(?:['\u2019][\\p{L}\\p{N}\\p{M}]+)*");

    /** Words that never make an entity span on their own: question frame, not content. */
    private static final Set<String> STOP_WORDS = Set.of(
            "a", "about", "acted", "actor", "actors", "all", "also", "an", "and", "any", "appear", "appeared",
            "are", "as", "at", "be", "been", "by", "can", "co", "did", "directed", "director", "directors",
            "do", "does", "film", "films", "for", "from", "genre", "genres", "had", "has", "have", "he", "her",
            "his", "how", "i", "in", "is", "it", "its", "kind", "language", "languages", "list", "me", "movie",
            "movies", "name", "names", "of", "on", "or", "other", "people", "person", "release", "released",
            "s", "same", "she", "star", "starred", "stars", "tell", "that", "the", "their", "them", "they",
            "this", "those", "to", "type", "types", "was", "were", "what", "when", "where", "which", "who",
            "whom", "whose", "with", "wrote", "written", "writer", "writers", "year", "years", "you");

    private final Transaction tx;
    private final String kg;
    private final Label entity = CandidateSubgraph.ENTITY;

    EntityLinker(Transaction tx, String kg) {
        this.tx = tx;
        this.kg = kg;
    }

    /**
     * The text whose embedding is z_q: every '[' and ']' replaced by a space, runs of whitespace collapsed,
     * trimmed ("who directed [Kismet]" -> "who directed Kismet"). Identical to
     * {@code kgqa.retrieve.subgraphrag.question_text}, which training uses, so both embed the same string.
     */
    static String withoutBrackets(String question) {
        String spaced = BRACKET_CHARS.matcher(question).replaceAll(" ");
        return SPACES.matcher(spaced).replaceAll(" ").trim();
    }

    /** The texts inside [brackets], in order. */
    static List<String> bracketed(String question) {
        List<String> found = new ArrayList<>();
        Matcher matcher = BRACKETS.matcher(question);
        while (matcher.find()) {
            String text = matcher.group(1).trim();
            if (!text.isEmpty()) {
                found.add(text);
            }
        }
        return found;
    }

    /** Lowercase, accents stripped, every run of non-letters/digits one space, trimmed. */
    static String normalize(String text) {
        String decomposed = Normalizer.normalize(text, Normalizer.Form.NFD);
        String stripped = MARKS.matcher(decomposed).replaceAll("");
        return NOT_WORD.matcher(stripped.toLowerCase(Locale.ROOT)).replaceAll(" ").trim();
    }

    /**
     * Resolves explicit names or ids; {@code where} names the argument in errors, e.g. {@code config.topicEntities}.
     */
    List<Node> resolveAll(List<String> texts, String where) {
        List<Node> found = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < texts.size(); i++) {
            String text = texts.get(i);
            List<Node> nodes = resolve(text);
            if (nodes.isEmpty()) {
                throw new IllegalArgumentException(where + "[" + i + "]: no entity with id or name '" + text
                        + "' in KG '" + kg + "'");
            }
            for (Node node : nodes) {
                if (seen.add(node.getElementId())) {
                    found.add(node);
                }
            }
        }
        return found;
    }

    /** Exact id, exact name, then normalised name equality; empty when nothing matches. */
    List<Node> resolve(String text) {
        List<Node> byId = find("id", text);
        if (!byId.isEmpty()) {
            return byId.subList(0, 1);
        }
        List<Node> byName = find("name", text);
        if (!byName.isEmpty()) {
            return byName;
        }
        return fulltextEqual(words(text));
    }

    /** Ids only (for {@code kgqa.subgraphrag.candidates}); null when absent. */
    Node byId(String id) {
        List<Node> nodes = find("id", id);
        return nodes.isEmpty() ? null : nodes.get(0);
    }

    private List<Node> find(String key, String value) {
        List<Node> nodes = new ArrayList<>();
        try (ResourceIterator<Node> it = tx.findNodes(entity, "kg", kg, key, value)) {
            while (it.hasNext() && nodes.size() < MAX_PER_NAME) {
                nodes.add(it.next());
            }
        }
        return nodes;
    }

    /**
     * The words of {@code text}, case kept; safe inside a Lucene phrase (letters, digits and inner
     * apostrophes only: no operators, no quotes). The index's analyzer lowercases them.
     */
    static List<String> words(String text) {
        List<String> words = new ArrayList<>();
        Matcher matcher = WORD.matcher(text);
        while (matcher.find()) {
            words.add(matcher.group());
        }
        return words;
    }

    /**
     * Entities whose normalised name equals the normalised words, through a full-text phrase query
     * (the index's analyzer lowercases but keeps accents and inner apostrophes, so the query keeps them too).
     */
    private List<Node> fulltextEqual(List<String> words) {
        if (words.isEmpty()) {
            return List.of();
        }
        String phrase = String.join(" ", words);
        String normalized = normalize(phrase);
        List<Node> matches = new ArrayList<>();
        for (Map.Entry<Node, Double> hit : fulltext("\"" + phrase + "\"", FULLTEXT_LIMIT).entrySet()) {
            Object name = hit.getKey().getProperty("name", null);
            if (name instanceof String s && normalize(s).equals(normalized)) {
                matches.add(hit.getKey());
                if (matches.size() >= MAX_PER_NAME) {
                    break;
                }
            }
        }
        return matches;
    }

    /** Full-text hits of this KG, best first. {@code query} must already be safe Lucene syntax. */
    private Map<Node, Double> fulltext(String query, int limit) {
        Map<Node, Double> hits = new LinkedHashMap<>();
        try (Result result = tx.execute(
                "CALL db.index.fulltext.queryNodes('entity_name', $query, {limit: $limit}) YIELD node, score "
                        + "WHERE node.kg = $kg RETURN node, score LIMIT $keep",
                // Over-fetch: hits of other KGs sharing the index are dropped after the index call.
                Map.of("query", query, "limit", limit * 4L, "kg", kg, "keep", limit))) {
            while (result.hasNext()) {
                Map<String, Object> row = result.next();
                hits.put((Node) row.get("node"), ((Number) row.get("score")).doubleValue());
            }
        }
        return hits;
    }

    /**
     * Links the entities of a free-text question (no brackets).
     *
     * @param relationWords words of the KG's relation names ("directed", "by", "language"), never spans on their own
     * @return the linked entities, longest spans first; empty when nothing at all matched
     */
    List<Node> linkFreeText(String question, Set<String> relationWords) {
        String[] tokens = words(question).toArray(new String[0]);
        if (tokens.length == 0) {
            return List.of();
        }
        boolean[] content = new boolean[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            String word = normalize(tokens[i]);
            content[i] = !STOP_WORDS.contains(word) && !relationWords.contains(word);
        }
        // Every span with a content word, as one OR of phrases: one index call instead of one per span.
        List<int[]> spans = new ArrayList<>();
        Set<String> phrases = new java.util.LinkedHashSet<>();
        for (int length = Math.min(MAX_SPAN_TOKENS, tokens.length); length >= 1; length--) {
            for (int start = 0; start + length <= tokens.length; start++) {
                if (hasContent(content, start, length)) {
                    spans.add(new int[] {start, length});
                    phrases.add("\"" + String.join(" ", Arrays.asList(tokens).subList(start, start + length)) + "\"");
                }
            }
        }
        if (spans.isEmpty()) {
            return List.of();
        }
        Map<String, List<Node>> byName = new HashMap<>();
        for (Node hit : fulltext(String.join(" OR ", phrases), SPAN_QUERY_LIMIT).keySet()) {
            Object name = hit.getProperty("name", null);
            if (name instanceof String s) {
                List<Node> same = byName.computeIfAbsent(normalize(s), key -> new ArrayList<>());
                if (same.size() < MAX_PER_NAME) {
                    same.add(hit);
                }
            }
        }

        // Longest spans first; a span links when it is an entity's whole name; linked spans do not overlap.
        boolean[] used = new boolean[tokens.length];
        List<Node> linked = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int[] span : spans) {
            int start = span[0];
            int length = span[1];
            if (!spanFree(used, start, length)) {
                continue;
            }
            String text = String.join(" ", Arrays.asList(tokens).subList(start, start + length));
            List<Node> matches = byName.get(normalize(text));
            if (matches == null) {
                matches = find("name", text); // exact name as typed, through the range index
            }
            if (matches.isEmpty()) {
                continue;
            }
            for (int i = start; i < start + length; i++) {
                used[i] = true;
            }
            for (Node node : matches) {
                if (seen.add(node.getElementId())) {
                    linked.add(node);
                }
            }
        }
        if (!linked.isEmpty()) {
            return linked;
        }
        // No exact name anywhere: the best fuzzy full-text hit of the content words, if any.
        List<String> contentWords = new ArrayList<>();
        for (int i = 0; i < tokens.length; i++) {
            if (content[i]) {
                contentWords.add(tokens[i].toLowerCase(Locale.ROOT)); // lowercase: never read as AND/OR/NOT
            }
        }
        Map<Node, Double> hits = fulltext(String.join(" ", contentWords), 1);
        return hits.isEmpty() ? List.of() : List.of(hits.keySet().iterator().next());
    }

    private static boolean spanFree(boolean[] used, int start, int length) {
        for (int i = start; i < start + length; i++) {
            if (used[i]) {
                return false;
            }
        }
        return true;
    }

    private static boolean hasContent(boolean[] content, int start, int length) {
        for (int i = start; i < start + length; i++) {
            if (content[i]) {
                return true;
            }
        }
        return false;
    }
}
