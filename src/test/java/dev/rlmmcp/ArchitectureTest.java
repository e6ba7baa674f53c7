package dev.rlmmcp;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.rlmmcp.cli.Main;
import dev.rlmmcp.kernel.channel.CallbackDepth;
import dev.rlmmcp.kernel.channel.CallbackException;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layers, enforced on the production classes: cli (wiring) and transport on top, then
 * cluster (a node's lease, sessions' ownership and routing), then tools, then rlm (the RLM loop and child runs), then core, then the siblings kernel, data, llm, store and bridge, and base at the bottom.
 * An arrow may only point down; no package may be in a cycle with another; only the top layers and
 * the bridge's SDK adapter may touch the MCP SDK, Jetty or the servlet API.
 */
@AnalyzeClasses(packages = "dev.rlmmcp", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    private static final String[] MCP_SDK_AND_HTTP = {
        "io.modelcontextprotocol..", "org.eclipse.jetty..", "jakarta.servlet.."
    };

    /**
     * Who may use whom. Among the siblings, two arrows are real and meant: store's S3 snapshot store is
     * built on data's S3 client and transfers (store → data); llm answers the kernel's llm_query
     * callbacks, so it implements the kernel's callback interface (see the rule below). The bridge's
     * callbacks are core's (McpCallbacks), which wires the bridge to the kernel.
     */
    @ArchTest
    static final ArchRule layers = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("Cli")
            .definedBy("dev.rlmmcp.cli..")
            .layer("Transport")
            .definedBy("dev.rlmmcp.transport..")
            .layer("Cluster")
            .definedBy("dev.rlmmcp.cluster..")
            .layer("Tools")
            .definedBy("dev.rlmmcp.tools..")
            .layer("Rlm")
            .definedBy("dev.rlmmcp.rlm..")
            .layer("Core")
            .definedBy("dev.rlmmcp.core..")
            .layer("Kernel")
            .definedBy("dev.rlmmcp.kernel..")
            .layer("Data")
            .definedBy("dev.rlmmcp.data..")
            .layer("Llm")
            .definedBy("dev.rlmmcp.llm..")
            .layer("Store")
            .definedBy("dev.rlmmcp.store..")
            .layer("Bridge")
            .definedBy("dev.rlmmcp.bridge")
            .layer("BridgeSdk")
            .definedBy("dev.rlmmcp.bridge.sdk..")
            .layer("Base")
            .definedBy("dev.rlmmcp.base..")
            .whereLayer("Cli")
            .mayNotBeAccessedByAnyLayer()
            .whereLayer("Transport")
            .mayOnlyBeAccessedByLayers("Cli")
            .whereLayer("Cluster")
            .mayOnlyBeAccessedByLayers("Transport", "Cli")
            .whereLayer("BridgeSdk")
            .mayOnlyBeAccessedByLayers("Cli")
            .whereLayer("Tools")
            .mayOnlyBeAccessedByLayers("Transport", "Cli")
            .whereLayer("Rlm")
            .mayOnlyBeAccessedByLayers("Tools", "Transport", "Cli")
            .whereLayer("Core")
            .mayOnlyBeAccessedByLayers("Cluster", "Rlm", "Tools", "Transport", "Cli")
            .whereLayer("Kernel")
            .mayOnlyBeAccessedByLayers("Llm", "Core", "Cli")
            .whereLayer("Data")
            .mayOnlyBeAccessedByLayers("Store", "Cluster", "Rlm", "Core", "Tools", "Transport", "Cli")
            .whereLayer("Store")
            .mayOnlyBeAccessedByLayers("Cluster", "Rlm", "Core", "Tools", "Transport", "Cli")
            .whereLayer("Llm")
            .mayOnlyBeAccessedByLayers("Rlm", "Core", "Tools", "Transport", "Cli")
            .whereLayer("Bridge")
            .mayOnlyBeAccessedByLayers("BridgeSdk", "Rlm", "Core", "Tools", "Transport", "Cli");

    /**
     * Inside transport: stdio and HTTP (with its trace viewer) over the cluster's peer forwarding, over the
     * root (the inbound router and the MCP server assembly), over the stateless revision, over the JSON-RPC messages. The two transports do not
     * know each other.
     */
    @ArchTest
    static final ArchRule transportLayers = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("Stdio")
            .definedBy("dev.rlmmcp.transport.stdio..")
            .layer("Http")
            .definedBy("dev.rlmmcp.transport.http..")
            .layer("Peer")
            .definedBy("dev.rlmmcp.transport.peer..")
            .layer("TransportRoot")
            .definedBy("dev.rlmmcp.transport")
            .layer("Stateless")
            .definedBy("dev.rlmmcp.transport.stateless..")
            .layer("JsonRpc")
            .definedBy("dev.rlmmcp.transport.jsonrpc..")
            .whereLayer("Stdio")
            .mayNotBeAccessedByAnyLayer()
            .whereLayer("Http")
            .mayNotBeAccessedByAnyLayer()
            .whereLayer("Peer")
            .mayOnlyBeAccessedByLayers("Http")
            .whereLayer("TransportRoot")
            .mayOnlyBeAccessedByLayers("Peer", "Stdio", "Http")
            .whereLayer("Stateless")
            .mayOnlyBeAccessedByLayers("Peer", "TransportRoot", "Stdio", "Http")
            .whereLayer("JsonRpc")
            .mayOnlyBeAccessedByLayers("Peer", "Stateless", "TransportRoot", "Stdio", "Http");

    /** The trace viewer is a part of HTTP that knows nothing of MCP. */
    @ArchTest
    static final ArchRule traceViewerKnowsNoTransport = noClasses()
            .that()
            .resideInAPackage("dev.rlmmcp.transport.http.ui..")
            .should()
            .dependOnClassesThat(resideInAPackage("dev.rlmmcp.transport..")
                    .and(resideOutsideOfPackage("dev.rlmmcp.transport.http.ui..")));

    /**
     * The kernel's types stop at core: core maps the kernel's protocol records to its own, so that a
     * change to a harness reply field reaches no tool and no rendering. Only cli (which wires the
     * kernel factory) and llm (the callback interface, below) see the kernel besides core.
     */
    @ArchTest
    static final ArchRule kernelStopsAtCore = noClasses()
            .that()
            .resideOutsideOfPackages("dev.rlmmcp.core..", "dev.rlmmcp.kernel..", "dev.rlmmcp.cli..", "dev.rlmmcp.llm..")
            .should()
            .dependOnClassesThat()
            .resideInAPackage("dev.rlmmcp.kernel..")
            .because("core returns its own records; the kernel's wire records stop there");

    /** What llm may know of the kernel: its callback interface, nothing else. */
    @ArchTest
    static final ArchRule llmSeesOnlyTheKernelsCallbacks = noClasses()
            .that()
            .resideInAPackage("dev.rlmmcp.llm..")
            .should()
            .dependOnClassesThat(resideInAPackage("dev.rlmmcp.kernel..")
                    .and(not(belongToAnyOf(KernelCallbacks.class, CallbackException.class, CallbackDepth.class))))
            .because("the kernel owns the callback interface llm implements; the rest is core's to wire");

    /** Inside the kernel: the root (factory, settings) over the channel, over the process and protocol. */
    @ArchTest
    static final ArchRule kernelLayers = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .layer("KernelRoot")
            .definedBy("dev.rlmmcp.kernel")
            .layer("Channel")
            .definedBy("dev.rlmmcp.kernel.channel..")
            .layer("Process")
            .definedBy("dev.rlmmcp.kernel.process..")
            .layer("Protocol")
            .definedBy("dev.rlmmcp.kernel.protocol..")
            .whereLayer("KernelRoot")
            .mayNotBeAccessedByAnyLayer()
            .whereLayer("Channel")
            .mayOnlyBeAccessedByLayers("KernelRoot")
            .whereLayer("Process")
            .mayOnlyBeAccessedByLayers("KernelRoot", "Channel")
            .whereLayer("Protocol")
            .mayOnlyBeAccessedByLayers("KernelRoot", "Channel");

    @ArchTest
    static final ArchRule baseUsesNothingOfOurs = noClasses()
            .that()
            .resideInAPackage("dev.rlmmcp.base..")
            .should()
            .dependOnClassesThat(resideInAPackage("dev.rlmmcp..").and(resideOutsideOfPackage("dev.rlmmcp.base..")));

    @ArchTest
    static final ArchRule noPackageCycles =
            slices().matching("dev.rlmmcp.(**)").should().beFreeOfCycles();

    @ArchTest
    static final ArchRule onlyTheTopAndTheSdkAdapterUseTheMcpSdkOrHttp = noClasses()
            .that()
            .resideInAnyPackage(
                    "dev.rlmmcp.core..",
                    "dev.rlmmcp.kernel..",
                    "dev.rlmmcp.data..",
                    "dev.rlmmcp.llm..",
                    "dev.rlmmcp.store..",
                    "dev.rlmmcp.bridge",
                    "dev.rlmmcp.base..")
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(MCP_SDK_AND_HTTP)
            .because("the MCP SDK, Jetty and servlets belong to transport, tools, cli and bridge.sdk");

    /** The production classes (what the jar is made of) hold no test fixture and no test-only entry point. */
    @Test
    void theProductionClassesHoldNoTestFixture() throws Exception {
        Path classes = Path.of(
                Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(classes).isDirectory();
        List<String> found;
        try (Stream<Path> tree = Files.walk(classes)) {
            found = tree.map(p -> classes.relativize(p).toString().replace('\\', '/'))
                    .filter(p -> p.endsWith(".class"))
                    .toList();
        }
        assertThat(found).contains("dev/rlmmcp/cli/Main.class");
        assertThat(found)
                .noneMatch(p -> p.contains("Fixture")
                        || p.contains("Conformance")
                        || p.startsWith("dev/rlmmcp/e2e/")
                        || p.endsWith("Test.class")
                        || p.endsWith("IT.class"));
    }
}
