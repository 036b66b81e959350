package io.kgqa.procedures.util;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;

/** The loaded knowledge graphs, one {@code :KG} node each: the {@code kg} argument of every namespace. */
public final class KnowledgeGraphs {

    public static final Label KG = Label.label("KG");

    private KnowledgeGraphs() {
    }

    /**
     * {@code kg} itself when a KG of that name is loaded.
     *
     * @param where the argument named in errors, e.g. {@code config.kg}
     */
    public static String require(Transaction tx, String kg, String where) {
        if (kg == null || kg.isBlank()) {
            throw new BadArgumentException(where + " must be the name of a loaded KG, got "
                    + (kg == null ? "null" : "an empty string"));
        }
        try (ResourceIterator<Node> found = tx.findNodes(KG, "name", kg)) {
            if (found.hasNext()) {
                return kg;
            }
        }
        throw new BadArgumentException(where + ": no knowledge graph named '" + kg + "' is loaded" + known(tx));
    }

    /**
     * The KG used when none is named: the only one, else status 'complete' before any other, then the
     * latest {@code loaded_at} (as cypher_templates/kg/resolve orders them; a KG without loaded_at counts
     * as oldest), then the name, so that the choice never depends on storage order.
     *
     * @param where the argument named in the error when no KG is loaded
     */
    public static String defaultKg(Transaction tx, String where) {
        List<Node> kgs = new ArrayList<>();
        try (ResourceIterator<Node> it = tx.findNodes(KG)) {
            it.forEachRemaining(kgs::add);
        }
        Comparator<Node> order = Comparator
                .comparing((Node k) -> !"complete".equals(k.getProperty("status", null)))
                .thenComparing(k -> k.getProperty("loaded_at", null), KnowledgeGraphs::newestFirst)
                .thenComparing(k -> String.valueOf(k.getProperty("name", "")));
        return kgs.stream()
                .filter(k -> k.getProperty("name", null) instanceof String)
                .min(order)
                .map(k -> (String) k.getProperty("name"))
                .orElseThrow(() -> new BadArgumentException(
                        where + ": no knowledge graph is loaded; run `kgqa load` first"));
    }

    /** The KG a procedure's {@code config.kg} names, else the default one ({@link #defaultKg}). */
    public static String fromConfig(Transaction tx, Options options) {
        return options.has("kg") ? require(tx, options.string("kg", null), options.where("kg"))
                : defaultKg(tx, options.where("kg"));
    }

    /**
     * The sentence encoder {@code kg}'s stored vectors come from (its {@code embedding_model}, recorded by
     * {@code kgqa load}), or {@code fallback} when the KG records none (loaded without embeddings, or before
     * the property existed). Whatever compares a text with the KG's vectors embeds the text with this one.
     */
    public static String embeddingModel(Transaction tx, String kg, String fallback) {
        Node node = tx.findNode(KG, "name", kg);
        Object model = node == null ? null : node.getProperty("embedding_model", null);
        return model instanceof String s && !s.isBlank() ? s : fallback;
    }

    /**
     * Refuses a trained model whose input features came from another encoder than {@code kg}'s vectors: it
     * would score mismatched numbers without a word. A KG that records no encoder is let through.
     *
     * @param what the model, as errors name it, e.g. {@code SubgraphRAG model 'default'}
     * @param retrain the command that trains one on this KG
     */
    public static void requireSameEncoder(Transaction tx, String kg, String trainedWith, String what, String retrain) {
        String kgModel = embeddingModel(tx, kg, null);
        if (kgModel != null && !kgModel.equals(trainedWith)) {
            throw new BadArgumentException(what + " was trained on " + trainedWith + " embeddings but KG '" + kg
                    + "' was embedded with " + kgModel + "; train one on this KG (" + retrain + ")");
        }
    }

    /** " (loaded: a, b)" or " (none is loaded)": appended to errors about an unknown KG. */
    public static String known(Transaction tx) {
        List<String> names = new ArrayList<>();
        try (ResourceIterator<Node> it = tx.findNodes(KG)) {
            while (it.hasNext()) {
                names.add(String.valueOf(it.next().getProperty("name", "?")));
            }
        }
        return names.isEmpty() ? " (none is loaded)" : " (loaded: " + String.join(", ", names.stream().sorted().toList()) + ")";
    }

    /** Later timestamps first; missing or incomparable values (other types) after them. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int newestFirst(Object a, Object b) {
        boolean comparable = a instanceof Comparable && b != null && a.getClass() == b.getClass();
        if (comparable) {
            return ((Comparable) b).compareTo(a);
        }
        return Boolean.compare(a == null, b == null);
    }
}
