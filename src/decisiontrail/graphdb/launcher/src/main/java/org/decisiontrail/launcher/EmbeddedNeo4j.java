package org.decisiontrail.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.config.Setting;
import org.neo4j.io.ByteUnit;

/**
 * Runs Neo4j Community in this JVM with only the Bolt connector open, on loopback.
 *
 * <p>Prints exactly one line starting with {@code READY } once Bolt accepts connections, and shuts
 * the database down cleanly on SIGTERM (the JVM runs shutdown hooks) or, with
 * {@code --exit-on-stdin-eof}, when the parent process that started it goes away.
 */
public final class EmbeddedNeo4j {

    private EmbeddedNeo4j() {}

    public static void main(String[] argv) throws Exception {
        List<String> settings = new ArrayList<>();
        Map<String, String> args = parse(argv, settings);
        Path dataDir = Path.of(required(args, "--data-dir")).toAbsolutePath();
        String host = args.getOrDefault("--host", "127.0.0.1");
        int boltPort = Integer.parseInt(required(args, "--bolt-port"));
        long pageCacheMb = Long.parseLong(args.getOrDefault("--pagecache-mb", "256"));
        long txMemoryMb = Long.parseLong(args.getOrDefault("--tx-memory-mb", "1024"));
        // One transaction past this fails (TransactionOutOfMemoryError) and rolls back; 0 is no
        // limit but the total above.
        long txMaxMb = Long.parseLong(args.getOrDefault("--tx-max-mb", "0"));
        // Any transaction that sets no timeout of its own is stopped after this long: a runaway
        // query must not hold a core for good.
        long txTimeoutMs = Long.parseLong(args.getOrDefault("--transaction-timeout-ms", "600000"));
        // On shutdown, running transactions get this long to end before they are terminated.
        long shutdownTxEndMs = Long.parseLong(args.getOrDefault("--shutdown-transaction-end-ms", "5000"));

        // While a request is in progress the server sends a NOOP at least this often, and tells the
        // driver (the connection.recv_timeout_seconds hint: this times the probes) to give a
        // connection up when nothing at all arrives for that long. Without it a response lost on
        // the way would leave the driver waiting for good, and its transaction holding its locks
        // (seen here: a summary that never reached its reader, since found to be the driver's own
        // doing; docs/embedded-neo4j.md).
        long keepAliveMs = Long.parseLong(args.getOrDefault("--bolt-keep-alive-ms", "5000"));
        int keepAliveProbes = Integer.parseInt(args.getOrDefault("--bolt-keep-alive-probes", "2"));

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(dataDir)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, boltPort))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, boltPort))
                .setConfig(BoltConnector.connection_keep_alive_type, BoltConnector.KeepAliveRequestType.ALL)
                .setConfig(BoltConnector.connection_keep_alive, Duration.ofMillis(keepAliveMs))
                .setConfig(BoltConnector.connection_keep_alive_probes, keepAliveProbes)
                .setConfig(
                        BoltConnector.connection_keep_alive_streaming_scheduling_interval,
                        Duration.ofMillis(Math.max(100, keepAliveMs / 5)))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, ByteUnit.mebiBytes(txMemoryMb))
                .setConfig(GraphDatabaseSettings.memory_transaction_max_size, ByteUnit.mebiBytes(txMaxMb))
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMillis(txTimeoutMs))
                .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofMillis(shutdownTxEndMs))
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Transaction logs beyond recovery's serve incremental backups and cluster catch-up, which
                // this server has none of; Neo4j's default keeps two days (a 10M-decision benchmark load kept 22 GB).
                // Pruned at each checkpoint, so checkpoint every five minutes rather than fifteen.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "256M size")
                .setConfig(GraphDatabaseSettings.check_point_interval_time, Duration.ofMinutes(5))
                // Netty's graceful shutdown waits ~10 s by default; nothing is left to drain here.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                // Loopback only; the Python side connects without credentials.
                .setConfig(GraphDatabaseSettings.auth_enabled, false);
        applySettings(builder, settings);
        DatabaseManagementService dbms = builder.build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            System.out.println("STOPPED");
            System.out.flush();
            stopped.countDown();
        }, "neo4j-shutdown"));

        // Touch the default database so READY means queries can run, not just that Bolt is bound.
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        System.out.println("READY bolt://" + host + ":" + boltPort + " " + dataDir);
        System.out.flush();

        if (args.containsKey("--exit-on-stdin-eof")) {
            watchStdin();
        }
        stopped.await();
    }

    /** Exits (running the shutdown hook) once stdin closes: the parent that held it is gone. */
    private static void watchStdin() {
        Thread watcher = new Thread(() -> {
            try (InputStream in = System.in) {
                byte[] buffer = new byte[256];
                while (in.read(buffer) >= 0) {
                    // Nothing is expected on stdin; keep draining until EOF.
                }
            } catch (IOException ignored) {
                // A broken pipe means the parent is gone, as EOF does.
            }
            System.exit(0);
        }, "stdin-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }

    /**
     * Any further Neo4j setting, given as {@code --setting name=value} (repeatable), over the ones
     * above: what a fault scenario needs (transaction logs not preallocated, say) and nobody else.
     * Neo4j parses and validates them by their declarations, so an unknown name or a bad value
     * stops the start with Neo4j's own message.
     */
    private static void applySettings(DatabaseManagementServiceBuilder builder, List<String> settings) {
        Map<String, String> raw = new LinkedHashMap<>();
        for (String setting : settings) {
            int equals = setting.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("--setting wants name=value, not: " + setting);
            }
            raw.put(setting.substring(0, equals).trim(), setting.substring(equals + 1).trim());
        }
        if (raw.isEmpty()) {
            return;
        }
        Config parsed = Config.newBuilder().setRaw(raw).build();
        for (String name : raw.keySet()) {
            Setting<Object> setting = parsed.getSetting(name);
            builder.setConfig(setting, parsed.get(setting));
        }
    }

    private static Map<String, String> parse(String[] argv, List<String> settings) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            String key = argv[i];
            if (key.equals("--exit-on-stdin-eof")) {
                args.put(key, "true");
            } else if (key.equals("--setting") && i + 1 < argv.length) {
                settings.add(argv[++i]);
            } else if (key.startsWith("--") && i + 1 < argv.length) {
                args.put(key, argv[++i]);
            } else {
                throw new IllegalArgumentException("unexpected argument: " + key);
            }
        }
        return args;
    }

    private static String required(Map<String, String> args, String key) {
        String value = args.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing required argument " + key);
        }
        return value;
    }
}
