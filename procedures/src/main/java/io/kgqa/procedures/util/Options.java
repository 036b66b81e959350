package io.kgqa.procedures.util;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Typed, validated access to a procedure's {@code config :: MAP}. Every error names the argument and
 * key (e.g. {@code config.k}) and says what was expected and what was given, in Cypher's terms.
 */
public final class Options {

    private final Map<String, Object> values;
    private final String argument;

    /**
     * @param allowed the keys this procedure understands; any other key is an error (catches typos such as {@code {K: 5}})
     */
    public Options(Map<String, Object> values, String argument, Collection<String> allowed) {
        this.values = values == null ? Map.of() : values;
        this.argument = argument;
        for (String key : this.values.keySet()) {
            if (!allowed.contains(key)) {
                throw new BadArgumentException(argument + " has an unknown key '" + key + "'; known keys: "
                        + String.join(", ", new TreeSet<>(allowed)));
            }
        }
    }

    public boolean has(String key) {
        return values.get(key) != null;
    }

    /** The value as given, unchecked; for maps whose shape the caller validates. */
    public Object raw(String key) {
        return values.get(key);
    }

    public String where(String key) {
        return argument + "." + key;
    }

    /** An integer in [min, max]; {@code fallback} when absent or null. */
    public int integer(String key, int fallback, int min, int max) {
        Object value = values.get(key);
        if (value == null) {
            return fallback;
        }
        long number;
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            number = ((Number) value).longValue();
        } else if (value instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d)) {
            number = d.longValue();
        } else {
            throw new BadArgumentException(where(key) + " must be an integer, got " + describe(value));
        }
        if (number < min || number > max) {
            // No upper bound but int's: a number above it is "too big", not "not > 0".
            String range = max != Integer.MAX_VALUE ? "between " + min + " and " + max
                    : number > max ? "at most " + max : min == 1 ? "> 0" : ">= " + min;
            throw new BadArgumentException(where(key) + " must be " + range + ", got "
                    + (value instanceof Double ? value : number));
        }
        return (int) number;
    }

    /** A number in [min, max]; {@code fallback} when absent or null. */
    public double number(String key, double fallback, double min, double max) {
        Object value = values.get(key);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Number n) || Double.isNaN(n.doubleValue())) {
            throw new BadArgumentException(where(key) + " must be a number, got " + describe(value));
        }
        double x = n.doubleValue();
        if (x < min || x > max) {
            throw new BadArgumentException(where(key) + " must be between " + min + " and " + max + ", got " + x);
        }
        return x;
    }

    public boolean bool(String key, boolean fallback) {
        Object value = values.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        throw new BadArgumentException(where(key) + " must be a boolean, got " + describe(value));
    }

    /** A non-blank string, or {@code fallback} when absent. */
    public String string(String key, String fallback) {
        Object value = values.get(key);
        if (value == null) {
            return fallback;
        }
        if (value instanceof String s && !s.isBlank()) {
            return TextLimits.length(s, where(key));
        }
        throw new BadArgumentException(where(key) + " must be a non-empty string, got " + describe(value));
    }

    /**
     * {@code first} or {@code second}, {@code first} when absent: the words that pick one of two ways a procedure
     * works.
     */
    public String either(String key, String first, String second) {
        String value = string(key, first);
        if (!value.equals(first) && !value.equals(second)) {
            throw new BadArgumentException(where(key) + " must be '" + first + "' or '" + second + "', got '"
                    + value + "'");
        }
        return value;
    }

    /** A list of non-blank strings; null when absent. A single string is accepted as a one-element list. */
    public List<String> strings(String key) {
        Object value = values.get(key);
        if (value == null) {
            return null;
        }
        if (value instanceof String s) {
            value = List.of(s);
        }
        if (!(value instanceof List<?> list)) {
            throw new BadArgumentException(where(key) + " must be a list of strings, got " + describe(value));
        }
        List<String> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof String s) || s.isBlank()) {
                throw new BadArgumentException(where(key) + "[" + i + "] must be a non-empty string, got "
                        + describe(list.get(i)));
            }
            out.add(TextLimits.length(s, where(key) + "[" + i + "]"));
        }
        return out;
    }

    /** A list of exactly {@code dimension} numbers; null when absent. */
    public float[] vector(String key, int dimension) {
        float[] out = vector(key);
        if (out != null && out.length != dimension) {
            throw new BadArgumentException(where(key) + " must have " + dimension + " numbers (the model's"
                    + " embedding_dim), got " + out.length);
        }
        return out;
    }

    /** A list of finite numbers of any length, or null when absent. */
    public float[] vector(String key) {
        Object value = values.get(key);
        if (value == null) {
            return null;
        }
        float[] out = Vectors.toFloats(value);
        if (out == null || out.length == 0) {
            throw new BadArgumentException(where(key) + " must be a non-empty list of numbers, got "
                    + describe(value));
        }
        for (float f : out) {
            if (!Float.isFinite(f)) {
                throw new BadArgumentException(where(key) + " must contain only finite numbers");
            }
        }
        return out;
    }

    /** Cypher-flavoured type names, since the caller wrote Cypher, not Java. */
    public static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return "the string '" + (s.length() > 40 ? s.substring(0, 40) + "…" : s) + "'";
        }
        if (value instanceof Number || value instanceof Boolean) {
            return (value instanceof Boolean ? "the boolean " : "the number ") + value;
        }
        if (value instanceof List<?> || (value != null && value.getClass().isArray())) {
            return "a list";
        }
        if (value instanceof Map<?, ?>) {
            return "a map";
        }
        return "a " + value.getClass().getSimpleName();
    }
}
