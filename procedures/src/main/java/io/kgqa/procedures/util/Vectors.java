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
}
