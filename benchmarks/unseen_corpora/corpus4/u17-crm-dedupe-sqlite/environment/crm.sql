CREATE TABLE customers(id INTEGER PRIMARY KEY, email TEXT NOT NULL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL);
INSERT INTO customers VALUES (1,'ann@example.com'),(2,' Ann@Example.com '),(3,'bo@example.org'),(4,'cat@example.net'),(5,'BO@EXAMPLE.ORG'),(6,'dan@example.com'),(7,'cat@example.net ');
INSERT INTO orders VALUES (10,1,500),(11,2,700),(12,3,100),(13,5,250),(14,4,999),(15,7,1),(16,6,42),(17,2,8);
