// /docs: Swagger UI over /openapi.json, from a file rather than an inline script (the CSP allows no inline script).
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
