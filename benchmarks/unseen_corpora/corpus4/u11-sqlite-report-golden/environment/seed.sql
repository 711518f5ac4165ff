CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), placed_on TEXT, status TEXT, amount_cents INTEGER);
INSERT INTO customers VALUES (1,'Acme Corp'),(2,'Bolt Ltd'),(3,'Cyan Inc'),(4,'Delta LLC'),(5,'Echo GmbH'),(6,'Fjord AS');
INSERT INTO orders VALUES
 (1,1,'2023-01-15','paid',12000),(2,1,'2023-06-01','refunded',5000),(3,1,'2022-12-31','paid',99999),
 (4,2,'2023-03-03','paid',4500),(5,2,'2023-11-30','paid',7500),(6,2,'2024-01-01','paid',100000),
 (7,3,'2023-02-14','pending',30000),(8,3,'2023-08-08','paid',15000),
 (9,4,'2021-05-05','paid',50000),
 (10,5,'2023-12-31','paid',1),(11,5,'2023-07-04','paid',8999),
 (12,6,'2023-09-09','refunded',8000);
