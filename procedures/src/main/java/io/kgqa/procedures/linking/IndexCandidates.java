package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.HitAlignment.Hit;
import io.kgqa.procedures.linking.LinkText.Token;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;

/**
 * The entities of one KG that the indexes propose for a question: by exact name on the {@code (kg, name)}
 * range index, by initials on {@code (kg, id)}, and through the {@code entity_name} full-text index (placed on
 * the question by {@link HitAlignment}). Also the exact and phrase lookups of names given by the caller.
 */
final class IndexCandidates {

    /** Full-text hits fetched (all KGs share the index) ... */
    static final int FULLTEXT_FETCH = 200;
    /** ... and kept for this KG. */
    static final int FULLTEXT_KEEP = 80;
    /** Entities kept per explicit name: several entities may share one name (e.g. Freebase). */
    static final int MAX_PER_NAME = 5;
    private static final int EXPLICIT_FULLTEXT_LIMIT = 50;

    static final Label ENTITY = Label.label("Entity");
    static final String FULLTEXT_QUERY = "CALL db.index.fulltext.queryNodes('entity_name', $query, {limit: $limit})"
            + " YIELD node, score RETURN node, score";
    /** A word as Lucene's standard analyzer keeps it: letters/digits, inner apostrophes allowed ("schindler's"). */
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}\\p{M}]+(?:['\u2019][\\p{L}\\p{N}\\p{M}]+)*");

    private final Transaction tx;
    private final String kg;

    IndexCandidates(Transaction tx, String kg) {
        this.tx = tx;
        this.kg = kg;
    }

    /** A span of the question that a lookup string came from; {@code exactCase}: the string is the span as typed. */
    record SpanRef(int start, int end, boolean exactCase, boolean singular) {
    }

    // ---------------------------------------------------------------------------------------- exact

    /** Every entity named exactly by a span (in a few case variants, as a singular), in lookup order. */
    List<Candidate> exact(List<Token> tokens, boolean hasCase) {
        List<Candidate> out = new ArrayList<>();
        for (Map.Entry<String, List<SpanRef>> lookup : exactLookups(tokens).entrySet()) {
            try (ResourceIterator<Node> nodes = tx.findNodes(ENTITY, "kg", kg, "name", lookup.getKey())) {
                while (nodes.hasNext()) {
                    Node node = nodes.next();
                    String id = idOf(node);
                    String name = nameOf(node);
                    int degree = node.getDegree();
                    List<String> types = typesOf(node);
                    for (SpanRef span : lookup.getValue()) {
                        // without any capitals in the question, "ringo lam" (a tag) and "Ringo Lam" (a person)
                        // are nearly equally exact: both are kept (see SpanResolver), the one typed as is first
                        double quality = span.singular() ? LinkScoring.SINGULAR_MATCH : span.exactCase() ? 1.0
                                : !hasCase ? LinkScoring.EXACT_CASE_UNKNOWN : LinkScoring.EXACT_OTHER_CASE;
                        out.add(new Candidate(node, id, name, span.start(), span.end(),
                                span.singular() ? "singular" : "exact", quality, degree, types));
                    }
                }
            }
        }
        return out;
    }

    /** Strings to look up by exact name -> the spans they come from; spans left to right, shorter first. */
    static Map<String, List<SpanRef>> exactLookups(List<Token> tokens) {
        Map<String, List<SpanRef>> lookups = new LinkedHashMap<>();
        for (LinkText.Span span : LinkText.spans(tokens)) {
            int i = span.start();
            int j = span.end();
            String raw = LinkText.join(tokens, i, j);
            Set<String> typed = new LinkedHashSet<>(List.of(raw, LinkText.stripPunct(raw),
                    LinkText.stripPunctEnd(raw), LinkText.stripPunctStart(raw)));
            // "Wayne's World's writer": the name is the span without its possessive
            for (String text : List.copyOf(typed)) {
                String bare = NameSimilarity.withoutPossessive(LinkText.stripPunctEnd(text));
                if (bare != null) {
                    typed.add(bare);
                }
            }
            for (String text : typed) {
                if (text.isEmpty()) {
                    continue;
                }
                for (String variant : NameSimilarity.caseVariants(text)) {
                    lookups.computeIfAbsent(variant, v -> new ArrayList<>())
                            .add(new SpanRef(i, j, typed.contains(variant), false));
                }
            }
            // "westerns", "comedies": a plural of a singular name
            for (String singular : NameSimilarity.singulars(LinkText.stripPunct(raw))) {
                for (String variant : NameSimilarity.caseVariants(singular)) {
                    lookups.computeIfAbsent(variant, v -> new ArrayList<>()).add(new SpanRef(i, j, false, true));
                }
            }
        }
        return lookups;
    }

    // ------------------------------------------------------------------------------ full text, initials

    /** Entities of this KG whose name is {@code query}'s hit, best first, at most {@value #FULLTEXT_KEEP}. */
    List<Hit> fulltextHits(String query) {
        List<Hit> hits = new ArrayList<>();
        try (Result result = tx.execute(FULLTEXT_QUERY, Map.of("query", query, "limit", (long) FULLTEXT_FETCH))) {
            while (result.hasNext() && hits.size() < FULLTEXT_KEEP) {
                Node node = (Node) result.next().get("node");
                if (kg.equals(node.getProperty("kg", null))) {
                    hits.add(new Hit(node, idOf(node), nameOf(node), node.getDegree(), typesOf(node)));
                }
            }
        }
        return hits;
    }

    /**
     * A name typed as its initials ("USA", "usa", "U.S.A."), for the KG's best-connected names whose
     * initials it learned ({@link LinkingWords}); only a token typed in capitals, or in a question without
     * any, and not a question word.
     */
    List<Candidate> initials(List<Token> tokens, boolean[] content, boolean hasCase, LinkingWords learned) {
        Map<String, List<String>> known = learned.initials();
        if (known.isEmpty()) {
            return List.of();
        }
        List<Candidate> out = new ArrayList<>();
        for (int k = 0; k < tokens.size(); k++) {
            String letters = tokens.get(k).norm().replace(" ", "");
            String typed = LinkText.stripPunct(tokens.get(k).text());
            boolean capitals = !typed.isEmpty() && typed.chars().filter(Character::isLetter).allMatch(Character::isUpperCase);
            if (!content[k] || letters.length() < 2 || !known.containsKey(letters) || (hasCase && !capitals)) {
                continue;
            }
            for (String id : known.get(letters)) {
                // ids are unique within a KG only: the same dump loaded twice shares them
                for (Node node : find("id", id, 1)) {
                    out.add(new Candidate(node, id, nameOf(node), k, k + 1, "initials", LinkScoring.INITIALS_MATCH,
                            node.getDegree(), typesOf(node)));
                }
            }
        }
        return out;
    }

    // ----------------------------------------------------------------------------- derived words

    /**
     * Endings English adds to a place's name to say its people or its language: "russia"+"n", "japan"+"ese",
     * "egypt"+"ian", "islam"+"ic", "iraq"+"i", "german"+"" ("germany" less its "y").
     */
    static final List<String> DERIVING_ENDINGS = List.of("ian", "ese", "an", "ic", "ish", "n", "i", "");
    /** Letters a name drops before such an ending: "chin(a)ese", "mexic(o)an", "ital(y)ian", "german(y)". */
    static final List<String> DROPPED_LETTERS = List.of("", "a", "o", "y", "e");
    /** Letters a word needs before its derivation is looked up: shorter stems name too many things. */
    static final int MIN_DERIVED_STEM = 4;
    /** Relationships read from a derived entity to find a neighbour named with the word, at most. */
    static final int MAX_DERIVED_READ = 5_000;

    /**
     * The place or faith a word is derived from ("russian" -> Russia, "chinese" -> China, "canadians" ->
     * Canada, "islamic" -> Islam): each one-word content span, and its singular, less an ending of
     * {@link #DERIVING_ENDINGS}, plus a letter of {@link #DROPPED_LETTERS}, looked up by exact (capitalised)
     * name. The KG must vouch for the derivation, or "scottish" would be Scott: the entity has a neighbour
     * whose name holds the word ("Russian Language" beside Russia), or so many facts that it is a value many
     * entities share ({@link SpanResolver#SHARED_VALUE_DEGREE}: a country, a religion).
     */
    List<Candidate> derived(List<Token> tokens, boolean[] content) {
        List<Candidate> out = new ArrayList<>();
        for (int k = 0; k < tokens.size(); k++) {
            String word = tokens.get(k).norm();
            if (!content[k] || word.contains(" ") || LinkText.isDigits(word)) {
                continue;
            }
            Set<String> forms = new LinkedHashSet<>(List.of(word));
            forms.addAll(NameSimilarity.singulars(word));
            Set<String> seen = new HashSet<>();
            for (String form : forms) {
                for (String ending : DERIVING_ENDINGS) {
                    if (!form.endsWith(ending)) {
                        continue;
                    }
                    String stem = form.substring(0, form.length() - ending.length());
                    if (LinkText.length(stem) < MIN_DERIVED_STEM) {
                        continue;
                    }
                    for (String letter : DROPPED_LETTERS) {
                        String base = stem + letter;
                        if (base.equals(form) || forms.contains(base) || !seen.add(base)) {
                            continue;
                        }
                        String name = base.substring(0, 1).toUpperCase(Locale.ROOT) + base.substring(1);
                        try (ResourceIterator<Node> nodes = tx.findNodes(ENTITY, "kg", kg, "name", name)) {
                            while (nodes.hasNext()) {
                                Node node = nodes.next();
                                int degree = node.getDegree();
                                if (degree >= SpanResolver.SHARED_VALUE_DEGREE || neighbourNamedWith(node, forms)) {
                                    out.add(new Candidate(node, idOf(node), nameOf(node), k, k + 1, "derived",
                                            LinkScoring.DERIVED_MATCH, degree, typesOf(node)));
                                }
                            }
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Whether a neighbour's name holds one of {@code words} as a word ("Russian Language" for "russian"). */
    private static boolean neighbourNamedWith(Node node, Set<String> words) {
        int read = 0;
        for (Relationship r : node.getRelationships()) {
            if (++read > MAX_DERIVED_READ) {
                return false;
            }
            if (r.getOtherNode(node).getProperty("name", null) instanceof String name) {
                for (String w : LinkText.split(LinkText.normalize(name))) {
                    if (words.contains(w)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------- explicit names

    /** At most {@code limit} entities of this KG whose {@code key} property is {@code value}. */
    List<Node> find(String key, String value, int limit) {
        List<Node> nodes = new ArrayList<>();
        try (ResourceIterator<Node> it = tx.findNodes(ENTITY, "kg", kg, key, value)) {
            while (it.hasNext() && nodes.size() < limit) {
                nodes.add(it.next());
            }
        }
        return nodes;
    }

    /** The last entity of this KG the index yields for {@code key = value}, or null. */
    Node last(String key, String value) {
        Node last = null;
        try (ResourceIterator<Node> it = tx.findNodes(ENTITY, "kg", kg, key, value)) {
            while (it.hasNext()) {
                last = it.next();
            }
        }
        return last;
    }

    /**
     * Entities whose normalised name equals the normalised words, through a full-text phrase query (the
     * analyzer lowercases but keeps accents and inner apostrophes, so the phrase keeps them too).
     */
    List<Node> fulltextEqual(List<String> words) {
        if (words.isEmpty()) {
            return List.of();
        }
        String phrase = String.join(" ", words);
        String normalized = LinkText.normalize(phrase);
        List<Node> matches = new ArrayList<>();
        // Over-fetch: hits of other KGs sharing the index are dropped after the index call.
        try (Result result = tx.execute(FULLTEXT_QUERY,
                Map.of("query", "\"" + phrase + "\"", "limit", EXPLICIT_FULLTEXT_LIMIT * 4L))) {
            while (result.hasNext() && matches.size() < MAX_PER_NAME) {
                Node node = (Node) result.next().get("node");
                if (kg.equals(node.getProperty("kg", null)) && node.getProperty("name", null) instanceof String name
                        && LinkText.normalize(name).equals(normalized)) {
                    matches.add(node);
                }
            }
        }
        return matches;
    }

    /**
     * The words of {@code text}, case kept; safe inside a Lucene phrase (letters, digits and inner
     * apostrophes only: no operators, no quotes).
     */
    static List<String> words(String text) {
        List<String> words = new ArrayList<>();
        Matcher matcher = WORD.matcher(text);
        while (matcher.find()) {
            words.add(matcher.group());
        }
        return words;
    }

    // ------------------------------------------------------------------------------------ node values

    /** The entity's id as text; a node without one reads "None", the value links have always carried. */
    static String idOf(Node node) {
        return text(node.getProperty("id", null));
    }

    static String nameOf(Node node) {
        return text(node.getProperty("name", null));
    }

    private static String text(Object value) {
        return value == null ? "None" : String.valueOf(value);
    }

    static List<String> typesOf(Node node) {
        List<String> types = new ArrayList<>();
        for (RelationshipType type : node.getRelationshipTypes()) {
            types.add(type.name());
        }
        return types;
    }
}
