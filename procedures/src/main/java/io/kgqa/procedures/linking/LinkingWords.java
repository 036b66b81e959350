package io.kgqa.procedures.linking;

import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.text.LightStemmer;
import io.kgqa.procedures.util.Json;
import io.kgqa.procedures.util.ModelFileCache;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the linker knows about one KG's words, learned by {@code kgqa train all} from the KG and its questions
 * ({@code kgs/<kg>/linking/words.json}): the words its questions use around their entities (a span made of
 * them is rarely the entity meant), how many names each common word occurs in (a name's rare words are its
 * head: "Microsoft" names "Microsoft Corporation"), the initials of its best-connected names ("usa"), and
 * the commonest words of English (from the encoder's vocabulary: a common word is not a surname typed alone,
 * nor a typo of a name).
 * A KG without the file has none of these: the linker then knows English and the KG's relation names only.
 * Read once per file version, in a deliberate thread-safe cache.
 */
record LinkingWords(Set<String> questionWords, Map<String, Integer> nameWords, int entities,
                    Map<String, List<String>> initials, Set<String> commonWords) {

    static final String FILE = "words.json";
    static final LinkingWords NONE = new LinkingWords(Set.of(), Map.of(), 0, Map.of(), Set.of());
    /** A word in more than this share of the KG's names (or 10 of them) says little about which one is meant. */
    static final double COMMON_NAME_SHARE = 0.001;
    static final int COMMON_NAME_MIN = 10;
    private static final ModelFileCache<LinkingWords> CACHE = new ModelFileCache<>(LinkingWords::read);

    static LinkingWords of(String kg) {
        return CACHE.get(ModelsDir.kgModelDir(kg, "linking").resolve(FILE), NONE);
    }

    static LinkingWords read(Path file) {
        try {
            Map<String, Object> data = Json.readObject(file);
            Set<String> questionWords = strings(data.get("question_words"));
            Set<String> commonWords = strings(data.get("common_words"));
            Map<String, Integer> nameWords = new HashMap<>();
            if (data.get("name_words") instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (e.getKey() instanceof String word && e.getValue() instanceof Number n) {
                        nameWords.put(word, n.intValue());
                    }
                }
            }
            Map<String, List<String>> initials = new HashMap<>();
            if (data.get("initials") instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (e.getKey() instanceof String letters && e.getValue() instanceof List<?> ids) {
                        initials.put(letters, ids.stream().filter(String.class::isInstance).map(String.class::cast)
                                .toList());
                    }
                }
            }
            int entities = data.get("entities") instanceof Number n ? n.intValue() : 0;
            return new LinkingWords(Set.copyOf(questionWords), Map.copyOf(nameWords), entities, Map.copyOf(initials),
                    Set.copyOf(commonWords));
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    private static Set<String> strings(Object value) {
        Set<String> out = new HashSet<>();
        if (value instanceof List<?> list) {
            for (Object w : list) {
                if (w instanceof String word) {
                    out.add(word);
                }
            }
        }
        return out;
    }

    /** One of the commonest words of English (as typed, lower-cased). */
    boolean commonInEnglish(String word) {
        return commonWords.contains(word);
    }

    private static final String[] SUFFIXES = {"ings", "ing", "ers", "ors", "er", "or", "ed", "es", "s"};

    /** A light English stem: one common ending off, then a doubled final consonant ("starring" -> "star"). */
    static String stem(String word) {
        return LightStemmer.stem(word, SUFFIXES);
    }

    /** Whether {@code word} (normalised) is in so many of the KG's names that it does not pick one out. */
    boolean commonInNames(String word) {
        Integer df = nameWords.get(word);
        return df != null && df >= Math.max(COMMON_NAME_MIN, COMMON_NAME_SHARE * entities);
    }
}
