package io.kgqa.procedures.util;

import java.util.List;

/** Conversions of stored or passed vectors (float[], double[], Cypher lists of numbers) to float[]. */
public final class Vectors {

    private Vectors() {
    }

    /** The value as float[], or null when it is not a vector of numbers. */
    public static float[] toFloats(Object value) {
        if (value instanceof float[] floats) {
            return floats;
        }
        if (value instanceof double[] doubles) {
            float[] out = new float[doubles.length];
            for (int i = 0; i < doubles.length; i++) {
                out[i] = (float) doubles[i];
            }
            return out;
        }
        if (value instanceof long[] longs) {
            float[] out = new float[longs.length];
            for (int i = 0; i < longs.length; i++) {
                out[i] = longs[i];
            }
            return out;
        }
        if (value instanceof List<?> list) {
            float[] out = new float[list.size()];
            for (int i = 0; i < out.length; i++) {
                if (!(list.get(i) instanceof Number n)) {
                    return null;
                }
                out[i] = n.floatValue();
            }
            return out;
        }
        return null;
    }

    /** Cosine similarity; 0 when either vector is missing or zero. */
    /**
     * Whether {@code v} has no direction: the static encoder's embedding of a text none of whose tokens it
     * knows. A vector index refuses it as a query, and it is close to nothing.
     */
    public static boolean isZero(float[] v) {
        for (float x : v) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    public static double cosine(float[] a, float[] b) {
        if (a == null || b == null) {
            return 0;
        }
        double dot = 0;
        double normA = 0;
        double normB = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            normA += (double) a[i] * a[i];
            normB += (double) b[i] * b[i];
        }
        return normA == 0 || normB == 0 ? 0 : dot / Math.sqrt(normA * normB);
    }
}
