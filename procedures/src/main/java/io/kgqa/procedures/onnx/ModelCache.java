package io.kgqa.procedures.onnx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The deliberate, thread-safe cache of loaded models (ONNX Runtime sessions and what goes with them).
 *
 * <p>Why: creating an {@code OrtSession} costs 10–500 ms, far more than one scoring call, so each
 * model is loaded once per server and shared by all queries. {@code OrtSession.run} is thread-safe.
 *
 * <p><b>Reload.</b> An entry is keyed by its directory and stamped with the modification time and
 * size of the files it was loaded from. Every {@link #acquire} re-reads those (one {@code stat} per
 * file), so when {@code kgqa train subgraphrag} installs a new {@code model.onnx} the next call loads
 * it; no restart.
 *
 * <p><b>Closing safely.</b> A replaced model may still be in use by a running query, and closing a
 * session under a running {@code run} crashes natively. So values are reference counted: the cache
 * holds one reference, every {@link Lease} another, and the value is closed when the last one is
 * released.
 *
 * @param <T> the loaded model
 */
public final class ModelCache<T extends AutoCloseable> {

    /** Builds the value from a model directory; may throw IOException or IllegalArgumentException. */
    @FunctionalInterface
    public interface Loader<T> {
        T load(Path directory) throws Exception;
    }

    private final ConcurrentHashMap<Path, Entry<T>> entries = new ConcurrentHashMap<>();

    /**
     * A loaded model that stays open until {@link #close()}; use with try-with-resources.
     */
    public static final class Lease<T extends AutoCloseable> implements AutoCloseable {
        private final Entry<T> entry;
        private boolean closed;

        private Lease(Entry<T> entry) {
            this.entry = entry;
        }

        public T get() {
            return entry.value;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                entry.release();
            }
        }
    }

    private static final class Entry<T extends AutoCloseable> {
        final String stamp;
        final T value;
        /** 1 for the cache itself while the entry is current, +1 per open lease; 0 means closed. */
        final AtomicInteger references = new AtomicInteger(1);

        Entry(String stamp, T value) {
            this.stamp = stamp;
            this.value = value;
        }

        boolean tryRetain() {
            while (true) {
                int count = references.get();
                if (count == 0) {
                    return false;
                }
                if (references.compareAndSet(count, count + 1)) {
                    return true;
                }
            }
        }

        void release() {
            if (references.decrementAndGet() == 0) {
                try {
                    value.close();
                } catch (Exception ignored) {
                    // A model that fails to close leaks native memory at worst; nothing to report to a query.
                }
            }
        }
    }

    /**
     * The model in {@code directory}, loading it if it is not cached or if any of {@code files}
     * changed since it was loaded.
     *
     * @param files the files whose (mtime, size) decide whether the cached value is stale
     * @throws NoSuchFileException when one of {@code files} is missing
     */
    public Lease<T> acquire(Path directory, List<Path> files, Loader<T> loader) throws Exception {
        Path key = directory.toAbsolutePath().normalize();
        String stamp = stamp(files);
        Entry<T> current = entries.get(key);
        if (current != null && current.stamp.equals(stamp) && current.tryRetain()) {
            return new Lease<>(current);
        }
        // Loading is serialised per cache so that concurrent first calls load once, not N times.
        synchronized (this) {
            current = entries.get(key);
            if (current != null && current.stamp.equals(stamp) && current.tryRetain()) {
                return new Lease<>(current);
            }
            Entry<T> fresh = new Entry<>(stamp, loader.load(directory));
            fresh.references.incrementAndGet(); // the lease handed out below
            Entry<T> previous = entries.put(key, fresh);
            if (previous != null) {
                previous.release(); // the cache's own reference; closes once its last lease is done
            }
            return new Lease<>(fresh);
        }
    }

    /**
     * {@link #acquire(Path, List, Loader)} for a procedure: a loader's IllegalArgumentException (a message
     * for the user) passes as is, any other failure becomes "cannot load {what} from {directory}: …".
     */
    public Lease<T> acquire(String what, Path directory, List<Path> files, Loader<T> loader) {
        try {
            return acquire(directory, files, loader);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("cannot load " + what + " from " + directory + ": " + e, e);
        }
    }

    /** Drops every cached model (for tests); in-flight leases keep theirs open until released. */
    public synchronized void clear() {
        for (Path key : List.copyOf(entries.keySet())) {
            Entry<T> removed = entries.remove(key);
            if (removed != null) {
                removed.release();
            }
        }
    }

    /** Number of cached models (for tests). */
    public int size() {
        return entries.size();
    }

    private static String stamp(List<Path> files) throws IOException {
        StringBuilder stamp = new StringBuilder();
        for (Path file : files) {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            stamp.append(file.getFileName()).append('@')
                    .append(attributes.lastModifiedTime().toMillis()).append(':')
                    .append(attributes.size()).append(':')
                    .append(attributes.fileKey()).append(';');
        }
        return stamp.toString();
    }
}
