package io.meshpilot.cli;

import io.meshpilot.lifecycle.ExitCodes;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code pilot-discovery request <method> <path> [body]}: an HTTP request to the monitoring
 * port on 127.0.0.1, as istiod's. 2xx/3xx and 404 print the body; other errors print to
 * stderr and exit non-zero.
 */
@Command(name = "request", mixinStandardHelpOptions = true,
        description = "Makes an HTTP request to the MeshPilot metrics/debug endpoint.")
public final class RequestCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "METHOD", description = "HTTP method, e.g. GET")
    String method;

    @Parameters(index = "1", paramLabel = "PATH", description = "Path, e.g. /debug/list")
    String path;

    @Parameters(index = "2", arity = "0..1", paramLabel = "BODY", description = "Request body")
    String body = "";

    @Option(names = "--port", description = "Monitoring port on 127.0.0.1. Default: ${DEFAULT-VALUE}.")
    int port = 15014;

    @Override
    public Integer call() {
        String p = path.startsWith("/") ? path.substring(1) : path;
        URI uri = URI.create("http://127.0.0.1:" + port + "/" + p);
        HttpRequest req = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(60))
                .method(method, body.isEmpty() ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .build();
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() > 399 && resp.statusCode() != 404) {
                System.err.println("Error: received unsuccessful status code " + resp.statusCode() + ": " + resp.body());
                return ExitCodes.FAILURE;
            }
            System.out.println(resp.body());
            return ExitCodes.OK;
        } catch (IOException e) {
            System.err.println("Error: " + method + " " + uri + ": " + e);
            return ExitCodes.FAILURE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.FAILURE;
        }
    }
}
