package io.kgqa.procedures.linking;

import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.util.Json;
import io.kgqa.procedures.util.ModelFileCache;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One KG's learned link scorer ({@code kgs/<kg>/linking/link_scorer.json}, fitted by {@code kgqa train all} on
 * the KG's questions): the probability that a candidate names a topic entity of the question, a logistic model
 * over {@link LinkFeatures}, weighed by name. It orders the candidates, and one below its {@code floor} is not linked; the hand
 * score still decides which further entities stand beside the first. A KG without the file, or with a file of
 * other features, links by the hand score alone. Read once per file version.
 */
record LinkScorer(double[] weights, double bias, double floor) {

    static final String FILE = "link_scorer.json";
    private static final LinkScorer NONE = new LinkScorer(new double[0], 0, 0);
    private static final ModelFileCache<LinkScorer> CACHE = new ModelFileCache<>(LinkScorer::read);

    /** The KG's scorer, or null when it has none that reads these features. */
    static LinkScorer of(String kg) {
        LinkScorer scorer = CACHE.get(ModelsDir.kgModelDir(kg, "linking").resolve(FILE), NONE);
        return scorer == NONE ? null : scorer;
    }

    static LinkScorer read(Path file) {
        try {
            return parse(Json.readObject(file));
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    /** The scorer a model file's object describes; {@code NONE} when its features are not these. */
    static LinkScorer parse(Map<String, Object> data) {
        if (!(data.get("features") instanceof List<?> names) || names.size() != LinkFeatures.NAMES.size()
                || !Set.copyOf(names).equals(Set.copyOf(LinkFeatures.NAMES))
                || !(data.get("weights") instanceof List<?> values) || values.size() != names.size()
                || !(data.get("bias") instanceof Number bias)) {
            return NONE;
        }
        double[] weights = new double[values.size()];
        for (int i = 0; i < weights.length; i++) {
            if (!(values.get(i) instanceof Number w) || !Double.isFinite(w.doubleValue())) {
                return NONE;
            }
            weights[LinkFeatures.NAMES.indexOf(names.get(i))] = w.doubleValue(); // the file's order is its own
        }
        double floor = data.get("floor") instanceof Number f ? f.doubleValue() : 0.0;
        return new LinkScorer(weights, bias.doubleValue(), floor);
    }

    /** The probability that a candidate with these features names a topic of its question. */
    double probability(double[] features) {
        double z = bias;
        for (int i = 0; i < weights.length; i++) {
            z += weights[i] * features[i];
        }
        return 1.0 / (1.0 + Math.exp(-z));
    }
}
