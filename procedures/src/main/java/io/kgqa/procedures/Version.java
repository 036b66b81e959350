package io.kgqa.procedures;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.UserFunction;

/**
 * The {@code kgqa.version} namespace: which plugin build the server has loaded.
 *
 * <p>Why: the Python side and the Cypher templates evolve with the procedures, so the CLI checks this
 * before relying on a procedure's signature, and a user can see at a glance which jar is installed.
 */
public class Version {

    /** Classpath location of the Maven-filtered version file; package-qualified so shading cannot clash. */
    static final String VERSION_RESOURCE = "/io/kgqa/procedures/version.properties";

    /** Resolved once per class load; immutable afterwards. */
    private static final String VERSION = resolveVersion();

    @UserFunction(name = "kgqa.version")
    @Description("kgqa.version() - the version of the kgqa plugin jar, e.g. \"0.1.0\" (the Maven project version it was built from).")
    public String version() {
        return VERSION;
    }

    /**
     * Reads the version from the filtered resource, which is present both in the jar and in
     * target/classes (tests). The manifest's Implementation-Version is only a fallback because it
     * exists only once the jar has been packaged.
     */
    static String resolveVersion() {
        try (InputStream in = Version.class.getResourceAsStream(VERSION_RESOURCE)) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                String version = properties.getProperty("version", "").trim();
                // An unfiltered "${project.version}" means the file was not processed by Maven.
                if (!version.isEmpty() && !version.startsWith("${")) {
                    return version;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + VERSION_RESOURCE, e);
        }
        String fromManifest = Version.class.getPackage().getImplementationVersion();
        return fromManifest != null ? fromManifest : "unknown";
    }
}
