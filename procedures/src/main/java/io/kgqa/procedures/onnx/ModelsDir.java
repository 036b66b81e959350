package io.kgqa.procedures.onnx;

import io.kgqa.procedures.util.BadArgumentException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Where the trained and exported models live on the server's file system.
 *
 * <p>Layout: {@code encoder/<encoderName>/{model.onnx, vocab.txt, encoder.json}}; each KG's own models in
 * {@code kgs/<kg>/<part>/} ({@code gsr}, {@code subgraphrag}, {@code simgrag}: written by
 * {@code kgqa train all --kg KG}); models installed by name in {@code <kind>/<modelName>/}.
 *
 * <p>Resolution order: the JVM system property {@value #PROPERTY} (the managed server sets it to
 * {@code <KGQA_HOME>/models}), then the environment variable {@code KGQA_MODELS_DIR}, then
 * {@code $KGQA_HOME/models}, then {@code ~/.kgqa/models}. Read on every call, not cached, so a test
 * or an operator can repoint it without a restart.
 */
public final class ModelsDir {

    public static final String PROPERTY = "kgqa.models.dir";

    /** Model names become directory names: no separators, no "..", nothing a shell would mangle. */
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    private ModelsDir() {
    }

    public static Path root() {
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property.trim());
        }
        String env = System.getenv("KGQA_MODELS_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env.trim());
        }
        String home = System.getenv("KGQA_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home.trim(), "models");
        }
        return Path.of(System.getProperty("user.home"), ".kgqa", "models");
    }

    /**
     * The directory of one model of a kind ({@code encoder} or {@code subgraphrag}).
     *
     * @param argumentName named in the error for an unsafe name, e.g. {@code config.model}
     */
    public static Path modelDir(String kind, String name, String argumentName) {
        if (name == null || !SAFE_NAME.matcher(name).matches() || name.contains("..")) {
            throw new BadArgumentException(argumentName + " must be a model name of letters, digits, '.', '_'"
                    + " or '-' (at most 128 characters), got " + (name == null ? "null" : "'" + name + "'"));
        }
        return root().resolve(kind).resolve(name);
    }

    /** The folder of one part of KG {@code kg}'s own models: {@code kgs/<kg>/<part>}. */
    public static Path kgModelDir(String kg, String part) {
        if (kg == null || !SAFE_NAME.matcher(kg).matches() || kg.contains("..")) {
            throw new BadArgumentException("config.kg must be a KG name, got " + (kg == null ? "null" : "'" + kg + "'"));
        }
        return root().resolve("kgs").resolve(kg).resolve(part);
    }

    /** The command that makes KG {@code kg}'s models. */
    public static String trainCommand(String kg) {
        return "kgqa train all --kg " + kg;
    }

    /**
     * Which model a procedure reads: the one named by {@code config.model} (in {@code <kind>/<name>}), else
     * KG {@code kg}'s own ({@code kgs/<kg>/<kind>}).
     *
     * @param label how errors name it ("GSR model for KG 'fb15k'", "GSR model 'x'")
     * @param command what makes it
     */
    public record Ref(Path directory, String label, String command, String argument) {
        public static Ref of(String kind, String what, String modelName, String kg) {
            if (modelName != null) {
                return new Ref(modelDir(kind, modelName, "config.model"), what + " '" + modelName + "'",
                        "kgqa train " + kind + " --kg " + kg + " --name " + modelName, "config.model: ");
            }
            return new Ref(kgModelDir(kg, kind), what + " for KG '" + kg + "'", trainCommand(kg), "");
        }

        /** The one-line error of a missing model (naming config.model when the caller named one). */
        public BadArgumentException missing(String file) {
            return new BadArgumentException(argument + "no " + label + " in " + directory + " (missing " + file
                    + "); run `" + command + "` to make it");
        }
    }
}
