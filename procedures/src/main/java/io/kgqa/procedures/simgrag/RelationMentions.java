package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.text.LightStemmer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * How strongly a question word names each relation of a KG, with no training: the best cosine similarity
 * between the word's embedding and the relation's text or one of its content words ("directed by",
 * "directed"), raised to {@link #LEXICAL} when the word and a relation word share a stem ("directors" and
 * "directed", "screenwriter" and "written"), which sentence encoders miss for agent nouns.
 */
final class RelationMentions {

    /** A stem match is as strong as a near-synonym. */
    static final double LEXICAL = 0.9;
    private static final Set<String> RELATION_STOP = Set.of("by", "has", "have", "in", "of", "the", "a", "is", "to",
            "for", "on", "at", "from", "with", "and");
    private static final String[] SUFFIXES = {"ings", "ing", "ers", "ors", "er", "or", "ed", "es", "s", "ions", "ion",
        "ten", "en"};

    record Relation(String name, String text, List<float[]> parts, Set<String> stems) {
    }

    private final List<Relation> relations;
    private final Function<String, float[]> embed;

    RelationMentions(Map<String, String> texts, Function<String, float[]> embed) {
        this(texts, Map.of(), embed);
    }

    /**
     * @param texts relation type name -> its readable text ("directed_by" -> "directed by")
     * @param phrases relation type name -> the words the KG's questions use for it (learned by
     *     {@code kgqa train all}; see {@link RelationPhrases}): each is one more way to name the relation
     * @param embed the text encoder (unit vectors)
     */
    RelationMentions(Map<String, String> texts, Map<String, List<String>> phrases, Function<String, float[]> embed) {
        this.embed = embed;
        this.relations = new ArrayList<>();
        for (Map.Entry<String, String> e : texts.entrySet()) {
            String text = e.getValue().toLowerCase(Locale.ROOT);
            List<float[]> parts = new ArrayList<>();
            parts.add(embed.apply(text));
            Set<String> stems = new HashSet<>();
            for (String phrase : phrases.getOrDefault(e.getKey(), List.of())) {
                String lowered = phrase.toLowerCase(Locale.ROOT).strip();
                if (!lowered.isEmpty() && !lowered.equals(text)) {
                    parts.add(embed.apply(lowered));
                }
            }
            List<String> words = Arrays.stream(text.split("[^a-z0-9]+")).filter(w -> !w.isEmpty()).toList();
            for (String w : words) {
                if (RELATION_STOP.contains(w)) {
                    continue;
                }
                if (words.size() > 1) {
                    parts.add(embed.apply(w));
                }
                for (String agent : agentNouns(w)) {
                    parts.add(embed.apply(agent));
                }
                String s = stem(w);
                if (s.length() >= 3) {
                    stems.add(s);
                }
            }
            relations.add(new Relation(e.getKey(), text, parts, stems));
        }
    }

    /**
     * The doer of a past-participle relation word ("directed" -> "director", "produced" -> "producer"): users
     * name the person ("the filmmaker behind X") as often as the act, and encoders put "filmmaker" nearer
     * "director" than "directed". Both English endings are tried; the encoder reads the wrong one as its stem.
     */
    static List<String> agentNouns(String word) {
        if (!word.endsWith("ed") || word.length() < 6) {
            return List.of();
        }
        String stem = word.substring(0, word.length() - 2);
        if (stem.length() >= 4 && stem.charAt(stem.length() - 1) == stem.charAt(stem.length() - 2)) {
            stem = stem.substring(0, stem.length() - 1); // "starred" -> "star"
        }
        return List.of(stem + "or", stem + "er");
    }

    List<Relation> relations() {
        return relations;
    }

    /** relation name -> evidence in [-1, 1] that {@code word} names it. */
    Map<String, Double> scores(String word) {
        float[] v = embed.apply(word);
        String st = stem(word);
        Map<String, Double> out = new LinkedHashMap<>();
        for (Relation r : relations) {
            double best = -1;
            for (float[] p : r.parts()) {
                best = Math.max(best, dot(v, p));
            }
            for (String x : r.stems()) {
                if (st.equals(x) || (x.length() >= 4 && (st.endsWith(x) || st.startsWith(x)))
                        || (st.length() >= 4 && x.startsWith(st))) {
                    best = Math.max(best, LEXICAL);
                }
            }
            out.put(r.name(), best);
        }
        return out;
    }

    /** A light English stemmer: one common suffix off, then a doubled final consonant ("starred" -> "star"). */
    static String stem(String word) {
        return LightStemmer.stem(word.toLowerCase(Locale.ROOT), SUFFIXES);
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            s += (double) a[i] * b[i];
        }
        return s;
    }
}
