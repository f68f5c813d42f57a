-- sheetd schema, version 1. Never edit once shipped: add a new numbered file.
SELECT 1;
