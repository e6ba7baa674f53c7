package dev.rlmmcp.transport;

/** The version in the jar's manifest ("dev" when run from classes). */
public final class Version {

    private Version() {}

    public static String current() {
        String version = Version.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }
}
