package io.kgqa.procedures.util;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A model read from one file, kept per file version (its path and modification time): {@code kgqa train all}
 * replaces a KG's model file while the database runs, and the next call reads the new one, once.
 *
 * @param <T> what the file is read into
 */
public final class ModelFileCache<T> {

    private final Map<String, T> cache = new ConcurrentHashMap<>();
    private final Function<Path, T> read;

    /** @param read reads a file into a model; it reports a bad file in the value it returns, never by throwing */
    public ModelFileCache(Function<Path, T> read) {
        this.read = read;
    }

    /** The model of {@code file}'s current version, or {@code missing} when there is no such file. */
    public T get(Path file, T missing) {
        String stamp;
        try {
            if (!Files.isRegularFile(file)) {
                return missing;
            }
            stamp = file + "|" + Files.getLastModifiedTime(file).toMillis();
        } catch (IOException e) {
            return missing;
        }
        T cached = cache.get(stamp);
        if (cached != null) {
            return cached;
        }
        // Not computeIfAbsent: dropping the file's older versions inside its function changes the map while
        // it computes, which ConcurrentHashMap does not allow (a version was read twice when the two stamps
        // shared a bin).
        synchronized (this) {
            cached = cache.get(stamp);
            if (cached == null) {
                cached = read.apply(file);
                cache.keySet().removeIf(k -> k.startsWith(file + "|"));
                cache.put(stamp, cached);
            }
            return cached;
        }
    }
}
