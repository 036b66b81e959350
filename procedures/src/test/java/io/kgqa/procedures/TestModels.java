package io.kgqa.procedures;

import io.kgqa.procedures.onnx.ModelsDir;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A temporary models directory for a test class: a copy of some of src/test/resources/models (the tiny ONNX
 * files of src/test/python/make_test_resources.py) that {@link ModelsDir} points at until {@link #close()}.
 */
public final class TestModels implements AutoCloseable {

    private final Path root;
    private final String previous;

    private TestModels(Path root) {
        this.root = root;
        this.previous = System.setProperty(ModelsDir.PROPERTY, root.toString());
    }

    /** A temp models directory, with nothing in it yet. */
    public static TestModels empty(String prefix) throws IOException {
        return new TestModels(Files.createTempDirectory(prefix));
    }

    public Path root() {
        return root;
    }

    /** Copies resource {@code /models/<from>} (a directory) to {@code <root>/<to>}. */
    public TestModels copy(String from, String to) throws IOException {
        try {
            copyTree(Path.of(TestModels.class.getResource("/models/" + from).toURI()), root.resolve(to));
        } catch (URISyntaxException e) {
            throw new IOException(e);
        }
        return this;
    }

    public static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path source : paths.toList()) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    public static void deleteTree(Path root) throws IOException {
        if (root == null || !Files.exists(root)) {
            return;
        }
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(root)) {
            paths = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path path : paths) {
            Files.deleteIfExists(path);
        }
    }

    @Override
    public void close() throws IOException {
        if (previous == null) {
            System.clearProperty(ModelsDir.PROPERTY);
        } else {
            System.setProperty(ModelsDir.PROPERTY, previous);
        }
        deleteTree(root);
    }
}
