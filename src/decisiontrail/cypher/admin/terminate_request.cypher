// Stops the transactions a request left running when its client went away: those whose metadata
// names the request (connection.transaction_metadata). They roll back, so nothing is written.
SHOW TRANSACTIONS YIELD transactionId AS transaction_id, metaData
WHERE metaData[$key] = $tag
TERMINATE TRANSACTIONS transaction_id
YIELD transactionId, message
RETURN transactionId AS transaction_id, message
