package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.util.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The words a KG's questions use for each of its relations, learned by {@code kgqa train all} from the KG's own
 * questions (labelled, or synthesised from its relation paths) and read from {@code kgs/<kg>/simgrag/phrases.json}
 * ({@code {"relations": {relation: [phrase, ...]}}}). A KG without the file has none: SimGRAG then reads the
 * relations' names alone.
 */
final class RelationPhrases {

    static final String FILE = "phrases.json";
    /** A phrase longer than this is not a phrase (the file is ours, but a bound keeps a bad one harmless). */
    static final int MAX_PHRASE = 80;
    static final int MAX_PER_RELATION = 64;

    private RelationPhrases() {
    }

    static Path file(String kg) {
        return ModelsDir.kgModelDir(kg, "simgrag").resolve(FILE);
    }

    /** What changes when the file does: its modification time, or "" without one. */
    static String stamp(Path file) {
        try {
            return Files.isRegularFile(file) ? String.valueOf(Files.getLastModifiedTime(file).toMillis()) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** relation -> phrases; empty when the file is absent or unreadable (SimGRAG works without it). */
    static Map<String, List<String>> read(Path file) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (!Files.isRegularFile(file)) {
            return out;
        }
        try {
            Object relations = Json.readObject(file).get("relations");
            if (relations instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (e.getKey() instanceof String name && e.getValue() instanceof List<?> list) {
                        List<String> phrases = new ArrayList<>();
                        for (Object item : list) {
                            if (item instanceof String phrase && !phrase.isBlank() && phrase.length() <= MAX_PHRASE
                                    && phrases.size() < MAX_PER_RELATION) {
                                phrases.add(phrase);
                            }
                        }
                        out.put(name, phrases);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return new LinkedHashMap<>();
        }
        return out;
    }
}
