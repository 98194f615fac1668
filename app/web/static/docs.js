// Swagger UI for /docs, from the copy this service ships (no CDN), started here rather
// than by an inline script so that the page's CSP can forbid inline scripts.
"use strict";

(function () {
  var root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
