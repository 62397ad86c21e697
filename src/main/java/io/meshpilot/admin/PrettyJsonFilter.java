package io.meshpilot.admin;

import com.google.gson.FormattingStyle;
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.ext.Provider;
import java.io.IOException;

/**
 * istiod's {@code ?pretty} for the {@link PrettyJson} resources: a JSON answer is re-written
 * with four-space indents (config.ToPrettyJSON); any other answer passes as it is.
 */
@Provider
@PrettyJson
public class PrettyJsonFilter implements ContainerResponseFilter {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls()
            .setFormattingStyle(FormattingStyle.PRETTY.withIndent("    ")).create();

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) throws IOException {
        if (!request.getUriInfo().getQueryParameters().containsKey("pretty")
                || !(response.getEntity() instanceof String body) || body.isEmpty()
                || response.getMediaType() == null
                || !response.getMediaType().isCompatible(MediaType.APPLICATION_JSON_TYPE)) {
            return;
        }
        try {
            String pretty = GSON.toJson(JsonParser.parseString(body));
            response.setEntity(pretty, response.getEntityAnnotations(), response.getMediaType());
        } catch (JsonParseException e) {
            // not JSON after all: answered as it was
        }
    }
}
